package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

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
