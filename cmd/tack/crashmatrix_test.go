package main

import (
	"encoding/json"
	"flag"
	"fmt"
	stdmaps "maps"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack/store/postgres/pgtest"
)

var (
	crashMatrixSeeds      = flag.Int("tack.crashmatrixseeds", 24, "random crash points of TestCrashMatrix over tack rpc, per store")
	crashMatrixServeSeeds = flag.Int("tack.crashmatrixserveseeds", 6, "random crash points of TestCrashMatrix over tack serve, on SQLite")
)

// restartedResult is the result a restore gives a call that was running.
const restartedResult = "interrupted: process restarted"

// crashCase is one crash point: a script, the commands that bring a first
// `tack rpc` to the point, and what the restored session must show.
type crashCase struct {
	name    string
	plugins string   // create_session's plugins, a JSON array; "" for none
	turns   []string // the script's turns; turn i's text starts with "t<i>"
	// drive brings the first process to the crash point, after the first
	// prompt "p0" was sent.
	drive func(r *crashRun)
	want  recovery
}

// recovery is what a restore must find for a named case.
type recovery struct {
	recovered   bool // agent_recovered is in the replay
	fromState   string
	interrupted int
	resumed     bool
	approvals   int
	question    bool
	// next are the turns the script may go on at; nil: the turn after the
	// last one in the restored history (a request in flight at the crash
	// has its turn played again).
	next []int
}

// crashCases are the named crash points: each waits for the event that
// puts the session in its state, then kills the process.
func crashCases() []crashCase {
	// A long history, killed in the middle of its run: turn 21 sleeps,
	// so the kill lands in the run however far the process runs ahead of
	// the test reading its events (on a loaded machine it finished all
	// 41 turns before the kill came once).
	long := make([]string, 40)
	for i := range long {
		long[i] = fmt.Sprintf(`{"delay_ms":2,"text":"t%d","tool_calls":[{"name":"echo","args":{"text":"x"}}]}`, i+1)
	}
	long[20] = `{"delay_ms":2,"text":"t21","tool_calls":[{"name":"sleep","args":{"ms":30000}}]}`
	long = append(long, `{"text":"t41 done"}`)
	return []crashCase{{
		// The request in flight never answered: turn 1 is played again,
		// its delay paid once more.
		name:  "running",
		turns: []string{`{"delay_ms":1500,"text":"t1"}`, `{"text":"t2"}`},
		drive: func(r *crashRun) { r.until(stateTo("running")) },
		want:  recovery{recovered: true, fromState: "running", next: []int{1}},
	}, {
		name:  "running, steered",
		turns: []string{`{"delay_ms":1500,"text":"t1"}`, `{"text":"t2"}`},
		drive: func(r *crashRun) {
			r.until(stateTo("running"))
			r.accepted(r.steer("steer while running", true))
		},
		want: recovery{recovered: true, fromState: "running", next: []int{1}},
	}, {
		name:  "streaming",
		turns: []string{`{"text":"t1 slow","chunk_size":1,"chunk_delay_ms":300}`, `{"text":"t2"}`},
		drive: func(r *crashRun) {
			r.until(isType("message_delta"))
			r.accepted(r.prompt("prompt while streaming"))
		},
		want: recovery{recovered: true, fromState: "streaming", next: []int{1}},
	}, {
		// The scenario: a 30 s sleep in the first turn, a second
		// prompt queued; the restart must not sleep again.
		name:  "executing killable tool",
		turns: []string{`{"text":"t1","tool_calls":[{"name":"sleep","args":{"ms":30000}}]}`, `{"text":"t2"}`},
		drive: func(r *crashRun) {
			r.until(isType("tool_execution_start"))
			r.accepted(r.prompt("second prompt"))
		},
		want: recovery{recovered: true, fromState: "executing_tools", interrupted: 1, next: []int{2}},
	}, {
		name:  "executing immune tool",
		turns: []string{`{"text":"t1","tool_calls":[{"name":"sleep_immune","args":{"ms":30000}}]}`, `{"text":"t2"}`},
		drive: func(r *crashRun) { r.until(isType("tool_execution_start")) },
		want:  recovery{recovered: true, fromState: "executing_tools", interrupted: 1, next: []int{2}},
	}, {
		name:    "approval pending",
		plugins: `[{"name":"approval"}]`,
		turns:   []string{`{"text":"t1","tool_calls":[{"name":"shell","args":{"command":"echo approved"}}]}`, `{"text":"t2"}`},
		drive:   func(r *crashRun) { r.until(isType("approval_required")) },
		want:    recovery{recovered: true, fromState: "idle", resumed: true, approvals: 1, next: []int{2}},
	}, {
		name:    "question pending",
		plugins: `[{"name":"ask_user"}]`,
		turns:   []string{`{"text":"t1","tool_calls":[{"name":"ask_user","args":{"question":"Go on?","options":["yes","no"]}}]}`, `{"text":"t2"}`},
		drive:   func(r *crashRun) { r.until(isType("ask_user")) },
		want:    recovery{recovered: true, fromState: "idle", resumed: true, question: true, next: []int{2}},
	}, {
		name:  "prompts and steering queued",
		turns: []string{`{"text":"t1","tool_calls":[{"name":"sleep","args":{"ms":30000}}]}`, `{"text":"t2"}`},
		drive: func(r *crashRun) {
			r.until(isType("tool_execution_start"))
			r.accepted(r.prompt("queued one"))
			r.accepted(r.steer("steer kept", false))
			r.accepted(r.prompt("queued two"))
		},
		want: recovery{recovered: true, fromState: "executing_tools", interrupted: 1, next: []int{2}},
	}, {
		name:  "long run",
		turns: long,
		drive: func(r *crashRun) {
			r.until(func(m map[string]any) bool { return m["type"] == "tool_execution_start" && m["name"] == "sleep" })
		},
		want: recovery{recovered: true, fromState: "executing_tools", interrupted: 1, next: []int{22}},
	}, {
		// A rollback took the first run's call out; the second run's call
		// must not take its id again.
		name:  "after a rollback",
		turns: []string{`{"text":"t1","tool_calls":[{"name":"sleep","args":{"ms":2000}}]}`, `{"text":"t2","tool_calls":[{"name":"sleep","args":{"ms":50}}]}`},
		drive: func(r *crashRun) {
			r.until(isType("tool_execution_start"))
			r.accepted(r.promptIfBusy("p1 instead", "rollback"))
			if !slices.ContainsFunc(r.seen[slices.IndexFunc(r.seen, isType("tool_execution_start"))+1:], isType("tool_execution_start")) {
				r.until(isType("tool_execution_start")) // the second run's
			}
		},
		want: recovery{next: []int{2, 3}},
	}, {
		// The run was told ended aborted: the restart must not end it again.
		name:  "after an abort while running",
		turns: []string{`{"delay_ms":3000,"text":"t1"}`, `{"text":"t2"}`},
		drive: func(r *crashRun) {
			r.until(isType("request_start"))
			r.command("abort", nil)
			r.until(func(m map[string]any) bool { return m["type"] == "agent_end" && m["reason"] == "aborted" })
		},
		want: recovery{next: []int{1, 2}},
	}, {
		// The run was told started: its prompt is kept, and its id is not
		// given to another run.
		name:  "at agent_start",
		turns: []string{`{"delay_ms":1000,"text":"t1"}`, `{"text":"t2"}`},
		drive: func(r *crashRun) { r.until(isType("agent_start")) },
		want:  recovery{next: []int{1, 2}},
	}}
}

// TestCrashMatrix kills `tack rpc` and `tack serve` (kill -9) at each
// named crash point and at random ones, on SQLite and on PostgreSQL, and
// checks what the next process shows: reads first (messages, state,
// replay), then a prompt run to its end. Over tack serve PostgreSQL gets
// the named cases only.
func TestCrashMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildTack(t)
	for _, tr := range crashTransports {
		seeds := *crashMatrixSeeds
		if tr.name == "serve" {
			seeds = *crashMatrixServeSeeds
		}
		t.Run(tr.name, func(t *testing.T) {
			t.Run("sqlite", func(t *testing.T) {
				crashMatrix(t, tr, bin, seeds, func(t *testing.T, name string) []string {
					return []string{"--store", "sqlite:" + filepath.Join(t.TempDir(), "tack.db")}
				})
			})
			t.Run("postgres", func(t *testing.T) {
				dsn := pgtest.DSN(t)
				if tr.name == "serve" {
					seeds = 0
				}
				crashMatrix(t, tr, bin, seeds, func(t *testing.T, name string) []string {
					return []string{"--store", dsn, "--node", "node-" + tr.name + "-" + name}
				})
			})
		})
	}
}

// crashMatrix runs every case in parallel; storeArgs gives each its own
// store (SQLite) or node name (PostgreSQL, where session ids differ too).
func crashMatrix(t *testing.T, tr crashTransport, bin string, seeds int, storeArgs func(t *testing.T, name string) []string) {
	start := time.Now()
	t.Run("cases", func(t *testing.T) {
		for i, c := range crashCases() {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				id := fmt.Sprintf("%s-case-%d", tr.name, i)
				crashAt(t, tr, bin, storeArgs(t, id), id, c)
			})
		}
		for seed := range seeds {
			t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
				t.Parallel()
				id := fmt.Sprintf("%s-seed-%d", tr.name, seed)
				crashAt(t, tr, bin, storeArgs(t, id), id, randomCase(uint64(seed)))
			})
		}
	})
	t.Logf("%d crash points in %v", len(crashCases())+seeds, time.Since(start).Round(time.Millisecond))
}

// randomCase is a seeded random script and command sequence, killed at a
// random event count (or when the session has been quiet a while).
func randomCase(seed uint64) crashCase {
	rng := rand.New(rand.NewPCG(seed, 11))
	var turns []string
	for i := 1; i <= 12; i++ {
		switch rng.IntN(6) {
		case 0:
			turns = append(turns, fmt.Sprintf(`{"text":"t%d streamed","chunk_size":2,"chunk_delay_ms":3}`, i))
		case 1:
			turns = append(turns, fmt.Sprintf(`{"text":"t%d","tool_calls":[{"name":"echo","args":{"text":"x"}},{"name":"sleep","args":{"ms":%d}}]}`, i, 20+rng.IntN(60)))
		case 2:
			turns = append(turns, fmt.Sprintf(`{"text":"t%d","tool_calls":[{"name":"sleep_immune","args":{"ms":%d}}]}`, i, 20+rng.IntN(60)))
		case 3:
			turns = append(turns, fmt.Sprintf(`{"delay_ms":%d,"text":"t%d","tool_calls":[{"name":"echo","args":{"text":"x"}}]}`, rng.IntN(40), i))
		case 4:
			turns = append(turns, fmt.Sprintf(`{"delay_ms":%d,"text":"t%d"}`, rng.IntN(40), i))
		default:
			turns = append(turns, fmt.Sprintf(`{"thinking":"hmm","text":"t%d done"}`, i))
		}
	}
	kill := 5 + rng.IntN(60)
	type planned struct {
		at     int
		steer  bool
		keep   bool
		prompt string
	}
	var plan []planned
	for k := range rng.IntN(6) {
		plan = append(plan, planned{at: 1 + rng.IntN(kill), steer: rng.IntN(3) == 0, keep: rng.IntN(2) == 0, prompt: fmt.Sprintf("p%d", k+1)})
	}
	slices.SortFunc(plan, func(a, b planned) int { return a.at - b.at })
	return crashCase{
		name:  fmt.Sprintf("seed %d", seed),
		turns: turns,
		drive: func(r *crashRun) {
			for events := 0; events < kill; {
				if len(plan) > 0 && plan[0].at <= events {
					if plan[0].steer {
						r.steer(plan[0].prompt, !plan[0].keep)
					} else {
						r.prompt(plan[0].prompt)
					}
					plan = plan[1:]
					continue
				}
				m, ok := r.next(250 * time.Millisecond)
				switch {
				case !ok && len(plan) == 0:
					return // quiet, nothing left to send: crash now
				case !ok:
					plan[0].at = events // quiet: send the next command now
				case m["seq"] != nil:
					events++
				}
			}
		},
	}
}

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

// checkRuns: every run the first process told started ends exactly once
// across both processes (told ended by the first, or ended interrupted by
// the restore, or resumed paused for a person); a run told ended is not
// recovered or ended again; the second process starts no run under an id
// the first told. A run may also have ended in the store with the kill
// before its agent_end got out (the session had told it, the process had
// not written it yet): then either the restore recovers nothing and the
// restored history ends with a final answer (it was the last run), or the
// restore recovers a later run the first process never told started (a
// queued prompt started it). A session runs one run at a time, so every
// run before that one had ended in the store; events_lost covers the
// agent_end the client missed (checkGap).
func checkRuns(t *testing.T, first []map[string]any, second []any, restored []any) {
	t.Helper()
	finished := false
	if n := len(restored); n > 0 {
		m := restored[n-1].(map[string]any)
		finished = m["role"] == "assistant" && m["tool_calls"] == nil
	}
	var started []string
	told := map[string]bool{}
	ends := map[string][]string{} // run id: the first's agent_end reasons
	for _, m := range first {
		id, _ := m["run_id"].(string)
		switch m["type"] {
		case "agent_start":
			started = append(started, id)
			told[id] = true
		case "agent_end":
			ends[id] = append(ends[id], m["reason"].(string))
			told[id] = true
		}
	}
	again := map[string][]string{} // run id: the second's agent_end reasons
	resumed := map[string]bool{}
	later := false // the restore recovered a run the first never told started
	for _, e := range second {
		m := e.(map[string]any)
		id, _ := m["run_id"].(string)
		switch m["type"] {
		case "agent_start":
			if told[id] {
				t.Errorf("the restart started run %s, an id the first process told", id)
			}
		case "agent_end":
			again[id] = append(again[id], m["reason"].(string))
		case "agent_recovered":
			if len(ends[id]) > 0 && m["from_state"] != "idle" {
				t.Errorf("run %s was told ended (%v); the restart recovered it from %v", id, ends[id], m["from_state"])
			}
			resumed[id] = m["resumed"] == true
			later = later || !told[id]
			finished = false
		}
	}
	for _, id := range started {
		switch {
		case len(ends[id]) > 1:
			t.Errorf("run %s was told ended %d times: %v", id, len(ends[id]), ends[id])
		case len(ends[id]) == 1 && len(again[id]) > 0:
			t.Errorf("run %s was told ended (%s); the restart ended it again (%v)", id, ends[id][0], again[id])
		case len(ends[id]) == 0 && resumed[id]:
			// paused for a person: ends when answered
		case len(ends[id]) == 0 && len(again[id]) == 0 && (later || finished && id == started[len(started)-1]):
			// ended in the store, killed before it was told
		case len(ends[id]) == 0 && (len(again[id]) == 0 || again[id][0] != "interrupted"):
			t.Errorf("run %s was told started and never ended; the restart ended it %v, want once, interrupted\n%s", id, again[id], dumpEvents(second))
		}
	}
}

// checkToldKept: every prompt and accepted steering message the first
// process told received or queued is in the restored history (all of it:
// a rollback's messages stay there) or queues, unless told dropped.
func checkToldKept(t *testing.T, first []map[string]any, all []any, state map[string]any) {
	t.Helper()
	kept := userTexts(all)
	for _, q := range []string{"prompt_queue", "steering_queue"} {
		for _, s := range state[q].([]any) {
			if m, ok := s.(map[string]any); ok {
				s = m["text"]
			}
			kept[s.(string)]++
		}
	}
	dropped := map[string]bool{}
	for _, m := range first {
		if m["type"] == "prompt_dropped" || m["type"] == "steering_dropped" {
			dropped[m["text"].(string)] = true
		}
	}
	for _, m := range first {
		switch {
		case m["type"] == "prompt_received", m["type"] == "prompt_queued",
			m["type"] == "steering_received" && m["status"] == "accepted":
			if text := m["text"].(string); kept[text] == 0 && !dropped[text] {
				t.Errorf("%s %q was told; after the restart it is neither in the history nor queued\n%s", m["type"], text, dump(all))
			}
		}
	}
}

// checkCallIDs: no tool call id is used twice in the whole history (the
// messages compaction replaced and rollbacks took out included).
func checkCallIDs(t *testing.T, all []any) {
	t.Helper()
	seen := map[string]int{}
	for i, m := range all {
		calls, _ := m.(map[string]any)["tool_calls"].([]any)
		for _, c := range calls {
			id, _ := c.(map[string]any)["id"].(string)
			if j, ok := seen[id]; ok {
				t.Errorf("call id %q of message %d is the one of message %d\n%s", id, i, j, dump(all))
			}
			seen[id] = i
		}
	}
}

// maxSeq is the largest event number among lines.
func maxSeq(lines []map[string]any) uint64 {
	var top uint64
	for _, m := range lines {
		if s, ok := m["seq"].(float64); ok {
			top = max(top, uint64(s))
		}
	}
	return top
}

// heldCalls are the call ids the state holds for a person.
func heldCalls(state map[string]any) map[string]bool {
	held := map[string]bool{}
	for _, a := range state["pending_approvals"].([]any) {
		held[a.(map[string]any)["call_id"].(string)] = true
	}
	if q, ok := state["pending_question"].(map[string]any); ok {
		held[q["call_id"].(string)] = true
	}
	return held
}

// checkHistory checks a history as the protocol writes it: every tool
// call of an assistant message has exactly one result after it, before
// the next user or assistant message, and every result answers a call of
// the assistant message before it. Calls in held (waiting for a person)
// may lack a result, in the last assistant message only.
func checkHistory(msgs []any, held map[string]bool) error {
	seen := map[string]bool{}
	open := map[string]bool{} // calls of the current assistant message without a result
	var openAt int
	closeBatch := func(final bool) error {
		for id := range open {
			if !(final && held[id]) {
				return fmt.Errorf("call %s of message %d has no result", id, openAt)
			}
		}
		open = map[string]bool{}
		return nil
	}
	for i, m := range msgs {
		m := m.(map[string]any)
		switch m["role"] {
		case "user":
			if err := closeBatch(false); err != nil {
				return err
			}
		case "assistant":
			if err := closeBatch(false); err != nil {
				return err
			}
			openAt = i
			calls, _ := m["tool_calls"].([]any)
			for _, c := range calls {
				id, _ := c.(map[string]any)["id"].(string)
				if id == "" || seen[id] {
					return fmt.Errorf("message %d: call id %q is empty or used before", i, id)
				}
				seen[id], open[id] = true, true
			}
		case "tool":
			id, _ := m["tool_call_id"].(string)
			if !open[id] {
				return fmt.Errorf("message %d: result for %q answers no open call (orphan or duplicate)", i, id)
			}
			delete(open, id)
		default:
			return fmt.Errorf("message %d: role %v", i, m["role"])
		}
	}
	return closeBatch(true)
}

// checkKept fails unless every message_committed the first process printed
// is in msgs at its index, unchanged, or was taken out by a rollback: in
// all, marked rolled_back.
func checkKept(t *testing.T, seen []map[string]any, msgs, all []any) {
	t.Helper()
	for _, m := range seen {
		if m["type"] != "message_committed" {
			continue
		}
		i := int(m["index"].(float64))
		rolledBack := stdmaps.Clone(m["message"].(map[string]any))
		rolledBack["rolled_back"] = true
		if slices.ContainsFunc(all, func(a any) bool { return reflect.DeepEqual(a, rolledBack) }) {
			continue
		}
		if i >= len(msgs) || !reflect.DeepEqual(msgs[i], m["message"]) {
			got := any("nothing")
			if i < len(msgs) {
				got = msgs[i]
			}
			t.Fatalf("message %d was told committed as %v; the store has %v", i, m["message"], got)
		}
	}
}

// userTexts counts the user messages of msgs by text.
func userTexts(msgs []any) map[string]int {
	n := map[string]int{}
	for _, m := range msgs {
		if m := m.(map[string]any); m["role"] == "user" {
			n[m["content"].(string)]++
		}
	}
	return n
}

// checkQueues: every prompt and steering message the first process
// accepted as queued is still queued after the restart, in order, or was
// delivered (a user message); nothing else is queued but commands whose
// answer the crash cut off.
func checkQueues(t *testing.T, r *crashRun, msgs []any, state map[string]any) {
	t.Helper()
	delivered := userTexts(msgs)
	var steering []any
	for _, s := range state["steering_queue"].([]any) {
		steering = append(steering, s.(map[string]any)["text"])
	}
	queues := []struct {
		name  string
		ids   []string
		queue []any
		sure  func(resp map[string]any) bool // the command was accepted into the queue
	}{
		{"prompt", r.prompts, state["prompt_queue"].([]any), func(m map[string]any) bool { return dig(m, "data", "queued") == true }},
		{"steering", r.steers, steering, func(m map[string]any) bool { return m["ok"] == true }},
	}
	for _, q := range queues {
		var must, may []string
		for _, id := range q.ids {
			text := r.texts[id]
			if delivered[text] > 0 {
				continue
			}
			switch resp := r.response(id); {
			case resp == nil:
				may = append(may, text)
			case q.sure(resp):
				must, may = append(must, text), append(may, text)
			}
		}
		var got []string
		for _, s := range q.queue {
			got = append(got, s.(string))
		}
		if !isSubsequence(must, got) || !isSubsequence(got, may) {
			t.Fatalf("%s queue after the restart is %q: it must hold %q, and only from %q, in order", q.name, got, must, may)
		}
	}
}

// checkDelivered: after the run, every prompt and steering message the
// first process accepted is in the history exactly once.
func checkDelivered(t *testing.T, r *crashRun, msgs, all []any) {
	t.Helper()
	delivered := userTexts(msgs)
	for text, n := range userTexts(slices.DeleteFunc(slices.Clone(all), func(m any) bool { return m.(map[string]any)["rolled_back"] != true })) {
		delivered[text] += n // a rollback took it out
	}
	for _, id := range append(slices.Clone(r.prompts), r.steers...) {
		if resp := r.response(id); resp != nil && resp["ok"] == true && delivered[r.texts[id]] != 1 {
			t.Fatalf("%s %q was accepted; the history holds it %d times\n%s", id, r.texts[id], delivered[r.texts[id]], dump(msgs))
		}
	}
}

func isSubsequence(sub, of []string) bool {
	i := 0
	for _, s := range of {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}

// checkGap: subscribe since the last number the first process printed
// starts with events_lost for the gap, and every event of the replay is
// numbered after it.
func checkGap(t *testing.T, replay []any, before uint64) {
	t.Helper()
	if len(replay) == 0 {
		t.Fatalf("subscribe since %d: no events, want events_lost first", before)
	}
	lost := replay[0].(map[string]any)
	if lost["type"] != "events_lost" || lost["from"] != float64(before+1) {
		t.Fatalf("subscribe since %d: first event %v, want events_lost from %d", before, lost, before+1)
	}
	for _, e := range replay[1:] {
		if s := e.(map[string]any)["seq"].(float64); s <= lost["to"].(float64) {
			t.Fatalf("event %v numbered in the lost gap %v", e, lost)
		}
	}
}

// checkRecovered: agent_recovered, among the events the second process
// told, agrees with the restored history and says what the case expects.
func checkRecovered(t *testing.T, told []any, want recovery, msgs []any) {
	t.Helper()
	i := slices.IndexFunc(told, func(e any) bool { return e.(map[string]any)["type"] == "agent_recovered" })
	if i < 0 {
		if want.recovered {
			t.Fatalf("no agent_recovered after the restart")
		}
		return
	}
	rec := told[i].(map[string]any)
	interrupted := 0
	for _, m := range msgs {
		if m := m.(map[string]any); m["role"] == "tool" && m["content"] == restartedResult {
			interrupted++
		}
	}
	if rec["interrupted_calls"] != float64(interrupted) || rec["resumed"] != want.resumed {
		t.Fatalf("agent_recovered %v; the history has %d calls %q", rec, interrupted, restartedResult)
	}
	if want.fromState != "" && (rec["from_state"] != want.fromState || interrupted != want.interrupted || rec["run_id"] != "r-1") {
		t.Fatalf("agent_recovered %v, want from_state %s, run r-1 and %d interrupted calls", rec, want.fromState, want.interrupted)
	}
}

var turnText = regexp.MustCompile(`^t(\d+)\b`)

// turnOf is the script turn an assistant message came from, 0 if none.
func turnOf(m any) int {
	mm := m.(map[string]any)
	if mm["role"] != "assistant" {
		return 0
	}
	s, _ := mm["content"].(string)
	if g := turnText.FindStringSubmatch(s); g != nil {
		n, _ := strconv.Atoi(g[1])
		return n
	}
	return 0
}

// checkNextTurn: the first answer after the restart comes from the turn
// the script had reached, not from its first turn again. Past the last of
// its turns the script echoes (turn 0 here).
func checkNextTurn(t *testing.T, next []int, turns int, restored, after []any) {
	t.Helper()
	if next == nil {
		reached := 0
		for _, m := range restored {
			reached = max(reached, turnOf(m))
		}
		next = []int{reached + 1}
	}
	for _, m := range after[len(restored):] {
		if m.(map[string]any)["role"] != "assistant" {
			continue
		}
		got := turnOf(m)
		if got == 0 && slices.Max(next) > turns {
			return
		}
		if !slices.Contains(next, got) {
			t.Fatalf("the first answer after the restart is %v (turn %d), want turn %v", m, got, next)
		}
		return
	}
	t.Fatalf("no answer after the restart:\n%s", dump(after))
}

// dumpEvents is the types and run ids of events, one a line.
func dumpEvents(events []any) string {
	var b strings.Builder
	for _, e := range events {
		m := e.(map[string]any)
		j, _ := json.Marshal(m)
		fmt.Fprintf(&b, "  %.200s\n", j)
	}
	return b.String()
}

func dump(msgs []any) string {
	var b strings.Builder
	for i, m := range msgs {
		j, _ := json.Marshal(m)
		fmt.Fprintf(&b, "  %d %s\n", i, j)
	}
	return b.String()
}
