package actors

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// TestTodoWrite: a todo_write call replaces the list (todo_change, then
// the call's end) and its result says the list back; a call with a
// status out of the list is an error result naming it and leaves the
// list as it was; get_state carries the list.
func TestTodoWrite(t *testing.T) {
	h, _ := toolsHarness(t, `{"turns":[
		{"tool_calls":[{"name":"todo_write","args":{"todos":[{"text":"read the code","status":"done"},{"text":"write tests","status":"in_progress"},{"text":"document","status":"pending"}]}}]},
		{"tool_calls":[{"name":"todo_write","args":{"todos":[{"text":"read the code","status":"finished"}]}}]},
		{"text":"done"},
		{"tool_calls":[{"name":"todo_write","args":{"todos":[]}}]},
		{"text":"cleared"}]}`, nil, "todo_write")
	if st := h.state(); st.Todos != nil {
		t.Fatalf("todos before any todo_write: %v", st.Todos)
	}
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	want := []*eventsv1.Todo{{Text: "read the code", Status: "done"}, {Text: "write tests", Status: "in_progress"}, {Text: "document", Status: "pending"}}
	if got := h.state().Todos; !slices.EqualFunc(got, want, todoEqual) {
		t.Fatalf("get_state todos %v, want %v", got, want)
	}
	h.ok(&eventsv1.Prompt{Text: "clear it"})
	h.waitFor("agent_end", 2)

	toolCall := one("state_changed", "message_start", "response_complete", "message_committed", "token_usage", "tool_calls", "state_changed", "agent_status")
	written := one("tool_execution_start", "todo_change", "tool_execution_end", "tool_execution_metrics", "message_committed", "turn_end")
	refused := one("tool_execution_start", "tool_execution_end", "tool_execution_metrics", "message_committed", "turn_end")
	h.expect(seq(one("session_created"), runStart, toolCall, written, nextTurn, toolCall, refused, nextTurn, answer, runEnd,
		runStart, toolCall, written, nextTurn, answer, runEnd)...)
	changes := findAll(h.rec.Events(), "todo_change")
	if got := changes[0].GetTodoChange().Todos; !slices.EqualFunc(got, want, todoEqual) {
		t.Fatalf("first todo_change %v", got)
	}
	if got := changes[1].GetTodoChange().Todos; got == nil || len(got) != 0 {
		t.Fatalf("second todo_change %v, want an empty list", got)
	}
	var results []string
	for _, m := range h.history() {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	wantResults := []string{
		"The todo list is now (3):\n[done] read the code\n[in_progress] write tests\n[pending] document",
		`invalid arguments for todo_write: /todos/0/status: "finished" is not pending, in_progress or done`,
		"The todo list is now empty.",
	}
	if !slices.Equal(results, wantResults) {
		t.Fatalf("results\n got %q\nwant %q", results, wantResults)
	}
	if st := h.state(); st.Todos == nil || len(st.Todos) != 0 {
		t.Fatalf("get_state todos after clearing: %v", st.Todos)
	}
}

func todoEqual(a, b *eventsv1.Todo) bool { return proto.Equal(a, b) }
