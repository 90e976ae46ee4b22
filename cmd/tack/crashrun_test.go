package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// crashRun is the first process of a case and what it printed.
type crashRun struct {
	t        *testing.T
	p        crashProc
	session  string
	seen     []map[string]any // every line the first process printed
	prompts  []string         // ids of the prompt commands, in order
	steers   []string         // ids of the steer commands, in order
	texts    map[string]string
	commands int
}

func (r *crashRun) record(lines []map[string]any) map[string]any {
	r.seen = append(r.seen, lines...)
	return last(lines)
}

func (r *crashRun) until(pred func(map[string]any) bool) map[string]any {
	r.t.Helper()
	return r.record(r.p.lines().until(pred))
}

// next reads one line, or reports that none came within quiet.
func (r *crashRun) next(quiet time.Duration) (map[string]any, bool) {
	select {
	case m, ok := <-r.p.lines().lines:
		if !ok {
			r.t.Fatalf("the process closed its output before the crash")
		}
		r.seen = append(r.seen, m)
		return m, true
	case <-time.After(quiet):
		return nil, false
	}
}

// command sends cmd with fields and returns its id; the id's text is
// fields' text.
func (r *crashRun) command(cmd string, fields map[string]any) string {
	r.commands++
	id := fmt.Sprintf("%s-%d", cmd, r.commands)
	r.texts[id], _ = fields["text"].(string)
	r.p.do(cmd, id, fields)
	return id
}

func (r *crashRun) prompt(text string) string { return r.promptIfBusy(text, "") }

// promptIfBusy prompts with if_busy ifBusy ("": the default).
func (r *crashRun) promptIfBusy(text, ifBusy string) string {
	fields := map[string]any{"text": text}
	if ifBusy != "" {
		fields["if_busy"] = ifBusy
	}
	id := r.command("prompt", fields)
	r.prompts = append(r.prompts, id)
	return id
}

func (r *crashRun) steer(text string, interrupt bool) string {
	id := r.command("steer", map[string]any{"text": text, "interrupt_tools": interrupt})
	r.steers = append(r.steers, id)
	return id
}

// accepted waits for the command's response and fails unless it succeeded.
func (r *crashRun) accepted(id string) {
	r.t.Helper()
	if m := r.until(isResponse(id)); m["ok"] != true {
		r.t.Fatalf("%s: %v", id, m["<raw>"])
	}
}

// response is the first process's response to command id, nil if it did
// not print one before it died.
func (r *crashRun) response(id string) map[string]any {
	for _, m := range r.seen {
		if m["type"] == "response" && m["id"] == id {
			return m
		}
	}
	return nil
}

func stateTo(to string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == "state_changed" && m["to"] == to }
}

// crashAt runs one case: a first process driven to the crash point and
// killed, then a second on the same store that reads the session, prompts
// it again and runs to agent_end.
func crashAt(t *testing.T, tr crashTransport, bin string, args []string, session string, c crashCase) {
	r := &crashRun{t: t, p: tr.start(t, bin, args, session), session: session, texts: map[string]string{}}
	create := map[string]any{"script": json.RawMessage(`{"turns":[` + strings.Join(c.turns, ",") + `],"when_exhausted":"echo"}`)}
	if c.plugins != "" {
		create["plugins"] = json.RawMessage(c.plugins)
	}
	r.p.do("create_session", "create", create)
	if m := r.until(isResponse("create")); m["ok"] != true {
		t.Fatalf("create_session: %v", m["<raw>"])
	}
	r.prompt("p0")
	c.drive(r)
	r.seen = append(r.seen, r.p.kill()...)
	before := maxSeq(r.seen)

	p := tr.start(t, bin, args, session)
	var lines []map[string]any // every line the second process printed
	until := func(pred func(map[string]any) bool) map[string]any {
		t.Helper()
		got := p.lines().until(pred)
		lines = append(lines, got...)
		return last(got)
	}
	get := func(cmd, id string, fields map[string]any) map[string]any {
		t.Helper()
		p.do(cmd, id, fields)
		m := until(isResponse(id))
		if m["ok"] != true {
			t.Fatalf("%s after the restart: %v", cmd, m["<raw>"])
		}
		return m["data"].(map[string]any)
	}
	// Read first: the messages, before anything else names the session.
	msgs := get("get_messages", "m1", nil)["messages"].([]any)
	all := get("get_messages", "m1-all", map[string]any{"all": true})["messages"].([]any)
	state := get("get_state", "s1", nil)
	held := heldCalls(state)
	if err := checkHistory(msgs, held); err != nil {
		t.Fatalf("restored history: %v\n%s", err, dump(msgs))
	}
	checkCallIDs(t, all)
	checkToldKept(t, r.seen, all, state)
	checkKept(t, r.seen, msgs, all)
	if state["state"] != "idle" || len(state["running_tools"].([]any)) != 0 {
		t.Fatalf("restored state: %v", state)
	}
	checkQueues(t, r, msgs, state)
	// Events and responses are written by different goroutines: a live
	// event may come out before the response of the subscribe that
	// started the following.
	live := len(lines)
	replay := get("subscribe", "sub", map[string]any{"since": before})["events"].([]any)
	if n := len(state["pending_approvals"].([]any)); n != c.want.approvals {
		t.Fatalf("pending approvals after the restart: %v", state["pending_approvals"])
	}
	if (state["pending_question"] != nil) != c.want.question {
		t.Fatalf("pending question after the restart: %v", state["pending_question"])
	}

	// Then a new prompt, run to its end.
	p.do("prompt", "again", map[string]any{"text": "again"})
	until(func(m map[string]any) bool { return m["type"] == "agent_end" && m["reason"] == "completed" })
	// The restore's events wait for its write like any others: they are in
	// the replay, or follow it live when the write was still under way.
	told := slices.Clone(replay)
	for _, m := range lines[live:] {
		if m["type"] != "response" {
			told = append(told, m)
		}
	}
	checkGap(t, told, before)
	checkRuns(t, r.seen, told, msgs)
	checkRecovered(t, told, c.want, msgs)
	after := get("get_messages", "m2", nil)["messages"].([]any)
	if err := checkHistory(after, nil); err != nil {
		t.Fatalf("history after the new run: %v\n%s", err, dump(after))
	}
	checkKept(t, r.seen, after, all)
	if !reflect.DeepEqual(after[:min(len(msgs), len(after))], msgs) {
		t.Fatalf("the new run changed the restored history:\nrestored %s\nnow %s", dump(msgs), dump(after))
	}
	checkNextTurn(t, c.want.next, len(c.turns), msgs, after)
	end := get("get_state", "s2", nil)
	if len(end["prompt_queue"].([]any)) != 0 || len(end["steering_queue"].([]any)) != 0 {
		t.Fatalf("queues after the run: %v %v", end["prompt_queue"], end["steering_queue"])
	}
	checkDelivered(t, r, after, all)
	for _, m := range lines {
		if s, ok := m["seq"].(float64); ok && m["type"] != "events_lost" && uint64(s) <= before {
			t.Fatalf("event number %v reused after the restart (the first process reached %d): %v", s, before, m["<raw>"])
		}
	}
}
