package main

import (
	"encoding/json"
	"fmt"
	stdmaps "maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

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

func dump(msgs []any) string {
	var b strings.Builder
	for i, m := range msgs {
		j, _ := json.Marshal(m)
		fmt.Fprintf(&b, "  %d %s\n", i, j)
	}
	return b.String()
}
