package actors

import (
	"slices"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Building blocks of exact event sequences.
var (
	runStart = []string{"prompt_received", "agent_start", "message_committed",
		"state_changed", "agent_status", "turn_start", "request_start"}
	nextTurn = []string{"state_changed", "agent_status", "turn_start", "request_start"}
	answer   = []string{"state_changed", "message_start", "message_delta",
		"response_complete", "message_committed", "token_usage"}
	runEnd = []string{"turn_end", "state_changed", "agent_status", "agent_end"}
)

// seq joins building blocks into one sequence.
func seq(parts ...[]string) []string { return slices.Concat(parts...) }

func one(names ...string) []string { return names }

func TestTextOnlyRun(t *testing.T) {
	h := newHarness(t, `{"turns":[{"text":"Hello there"}]}`, nil)
	r := h.ok(&eventsv1.Prompt{Text: "hi"})
	if r.GetPrompt().GetQueued() {
		t.Fatal("a prompt in idle must not be queued")
	}
	end := h.waitFor("agent_end", 1)
	h.expect(seq(one("session_created"), runStart, answer, runEnd)...)
	if got := end.GetAgentEnd(); got.Reason != string(events.EndCompleted) || got.RunId != "r-1" {
		t.Fatalf("agent_end = %v", got)
	}
	if got, want := contents(h.history()), []string{"user:hi", "assistant:Hello there"}; !slices.Equal(got, want) {
		t.Fatalf("history = %q, want %q", got, want)
	}
	if st := h.state(); st.State != "idle" || st.RunId != nil {
		t.Fatalf("state = %v", st)
	}
}

func TestToolRoundTrip(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"text":"Echoing.","tool_calls":[{"name":"echo","args":{"text":"pong"}}]},
		{"text":"Done."}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "ping"})
	h.waitFor("agent_end", 1)
	h.expect(seq(one("session_created"), runStart, answer,
		one("tool_calls", "state_changed", "agent_status",
			"tool_execution_start", "tool_execution_end", "tool_execution_metrics",
			"message_committed", "turn_end"),
		nextTurn, answer, runEnd)...)
	msgs := h.history()
	if got, want := contents(msgs), []string{"user:ping", "assistant:Echoing.", "tool:pong", "assistant:Done."}; !slices.Equal(got, want) {
		t.Fatalf("history = %q, want %q", got, want)
	}
	if msgs[2].ToolCallId != msgs[1].ToolCalls[0].Id {
		t.Fatal("the tool result does not answer the call")
	}
}

func TestParallelToolsCommitInCallOrder(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"tool_calls":[{"name":"sleep","args":{"ms":300}},{"name":"echo","args":{"text":"fast"}}]},
		{"text":"Done."}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	var ends, commits []string
	for _, ev := range h.rec.Events() {
		if e := ev.GetToolExecutionEnd(); e != nil {
			ends = append(ends, e.Name)
		}
		if m := ev.GetMessageCommitted().GetMessage(); m.GetRole() == "tool" {
			commits = append(commits, m.Content)
		}
	}
	if want := []string{"echo", "sleep"}; !slices.Equal(ends, want) {
		t.Fatalf("tools finished %q, want %q (echo first)", ends, want)
	}
	if want := []string{"slept 300 ms", "fast"}; !slices.Equal(commits, want) {
		t.Fatalf("results committed %q, want %q (call order)", commits, want)
	}
	h.history()
}

func TestPromptQueuedWhileStreaming(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"text":"one two three four","chunk_size":4,"chunk_delay_ms":100},
		{"text":"second answer"}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "first"})
	h.waitFor("message_delta", 1)
	r := h.ok(&eventsv1.Prompt{Text: "then this"})
	if !r.GetPrompt().GetQueued() {
		t.Fatal("a prompt while streaming must be queued")
	}
	h.waitFor("agent_end", 1)
	deltas := []string{"message_delta", "message_delta", "message_delta", "message_delta", "message_delta"}
	h.expect(seq(one("session_created"), runStart,
		one("state_changed", "message_start", "message_delta", "prompt_queued"), deltas[1:],
		one("response_complete", "message_committed", "token_usage", "turn_end", "message_committed"),
		nextTurn, answer, runEnd)...)
	if got, want := contents(h.history()), []string{"user:first", "assistant:one two three four", "user:then this", "assistant:second answer"}; !slices.Equal(got, want) {
		t.Fatalf("history = %q, want %q", got, want)
	}
	if n := len(h.rec.Events()); h.waitFor("agent_end", 1).Seq != uint64(n) {
		t.Fatal("one run, one agent_end, last")
	}
}

func TestPromptQueuedDuringTools(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"tool_calls":[{"name":"sleep","args":{"ms":300}}]},
		{"text":"after tools"},
		{"text":"queued answer"}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "first"})
	h.waitFor("tool_execution_start", 1)
	if !h.ok(&eventsv1.Prompt{Text: "later"}).GetPrompt().GetQueued() {
		t.Fatal("a prompt during tools must be queued")
	}
	h.waitFor("agent_end", 1)
	toolAnswer := []string{"state_changed", "message_start", "response_complete", "message_committed", "token_usage"}
	h.expect(seq(one("session_created"), runStart, toolAnswer,
		one("tool_calls", "state_changed", "agent_status", "tool_execution_start", "prompt_queued",
			"tool_execution_end", "tool_execution_metrics", "message_committed", "turn_end"),
		nextTurn, answer, one("turn_end", "message_committed"),
		nextTurn, answer, runEnd)...)
	if got, want := contents(h.history()), []string{"user:first", "assistant:", "tool:slept 300 ms", "assistant:after tools", "user:later", "assistant:queued answer"}; !slices.Equal(got, want) {
		t.Fatalf("history = %q, want %q", got, want)
	}
}
