package actors

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
)

// lateReports are the reports a goroutine of the turn t could still send
// after the session moved on: every kind of message the stream pump and
// the tool runner send.
func lateReports(t tag) []any {
	call := &llm.ToolCall{Id: "c-99", Name: "echo", Args: &eventsv1.RawJSON{Json: []byte(`{"text":"late"}`)}}
	return []any{
		&streamChunk{tag: t, chunk: llm.Chunk{Kind: llm.ChunkThinkingStart}},
		&streamChunk{tag: t, chunk: llm.Chunk{Kind: llm.ChunkText, Text: "late"}},
		&streamChunk{tag: t, chunk: llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: call}},
		&streamDone{tag: t, resp: &llm.Response{
			Message:    &llm.Message{Role: llm.RoleAssistant, Content: "late", ToolCalls: []*llm.ToolCall{call}},
			StopReason: llm.StopToolCalls,
		}},
		&streamDone{tag: t, err: errors.New("late failure")},
		&toolUpdate{tag: t, index: 0, progress: reported("late")},
		&toolDone{tag: t, index: 0, result: tools.Result{Content: "late"}},
	}
}

// injectLate sends the reports of each stale tag to the session and
// checks that nothing was emitted and get_state did not change.
func injectLate(t *testing.T, h *harness, stale ...tag) {
	t.Helper()
	before, n := h.state(), h.rec.Len()
	for _, tg := range stale {
		for _, m := range lateReports(tg) {
			h.sys.Root.Send(h.pid, m)
		}
	}
	h.drain()
	after := h.state()
	if !proto.Equal(before, after) {
		t.Errorf("late reports changed get_state:\nbefore %v\nafter  %v", before, after)
	}
	if h.rec.Len() != n {
		t.Errorf("late reports emitted %q", h.rec.Types()[n:])
	}
}

// noLateText checks that no late report reached the history.
func noLateText(t *testing.T, h *harness) {
	t.Helper()
	for _, m := range h.history() {
		if strings.Contains(m.Content, "late") || m.ToolCallId == "c-99" {
			t.Errorf("a late report reached the history: %v", m)
		}
	}
	checkLog(t, h.rec.Events())
}

// TestLateMessagesIgnored injects, in every state, the reports of an
// earlier run (r-1) and of an earlier turn of the current run (r-2, turn
// 1) while run r-2 is in its second turn.
func TestLateMessagesIgnored(t *testing.T) {
	const (
		textTurn = `{"text":"abcdefgh","chunk_size":4}`
		toolTurn = `{"tool_calls":[{"name":"hold"}]}`
	)
	script := func(second string) string {
		return `{"turns":[{"text":"first"},{"tool_calls":[{"name":"echo","args":{"text":"e"}}]},` + second + `,{"text":"last"}]}`
	}
	oldRun, oldTurn := tag{run: 1, turn: 1}, tag{run: 2, turn: 1}

	t.Run("idle", func(t *testing.T) {
		h := newHarness(t, script(textTurn), nil)
		h.ok(&eventsv1.Prompt{Text: "one"})
		h.waitFor("agent_end", 1)
		injectLate(t, h, oldRun, tag{run: 2, turn: 1})
		noLateText(t, h)
	})
	for _, state := range []string{"running", "streaming", "executing_tools"} {
		t.Run(state, func(t *testing.T) {
			g := newGate()
			var model *llm.Model
			switch state {
			case "running":
				model = heldAfter(t, "", script(textTurn), g, 0, 2)
			case "streaming":
				model = heldAfter(t, "", script(textTurn), g, 1, 2)
			case "executing_tools":
				model = scriptModel(t, "", script(toolTurn))
			}
			h := newHarnessModel(t, model, nil, holdTool("hold", tools.Killable, g))
			h.ok(&eventsv1.Prompt{Text: "one"})
			h.waitFor("agent_end", 1)
			h.ok(&eventsv1.Prompt{Text: "two"})
			h.waitFor("turn_start", 3) // r-2, turn 2
			switch state {
			case "streaming":
				h.waitFor("message_delta", 2)
			case "executing_tools":
				h.waitFor("tool_execution_start", 2)
			}
			if st := h.state(); st.State != state {
				t.Fatalf("state = %s, want %s", st.State, state)
			}
			injectLate(t, h, oldRun, oldTurn)
			g.open()
			h.waitFor("agent_end", 2)
			noLateText(t, h)
		})
	}

	// A call settled by an abort (or a steer) ignores what its tool reports
	// afterwards, even with the current tag.
	t.Run("killed_call", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, `{"turns":[{"tool_calls":[{"name":"hold"},{"name":"hold_immune"}]},{"text":"never"}]}`, nil,
			holdTool("hold", tools.Killable, newGate()), holdTool("hold_immune", tools.Immune, g))
		h.ok(&eventsv1.Prompt{Text: "go"})
		h.waitFor("tool_execution_start", 2)
		h.ok(&eventsv1.Abort{})
		h.waitToolEnd("c-1")
		current := tag{run: 1, turn: 1}
		before, n := h.state(), h.rec.Len()
		h.sys.Root.Send(h.pid, &toolUpdate{tag: current, index: 0, progress: reported("late")})
		h.sys.Root.Send(h.pid, &toolDone{tag: current, index: 0, result: tools.Result{Content: "late"}})
		h.drain()
		if after := h.state(); !proto.Equal(before, after) || h.rec.Len() != n {
			t.Errorf("reports for a killed call changed something:\nbefore %v\nafter  %v\nevents %q", before, after, h.rec.Types()[n:])
		}
		g.open()
		h.waitFor("agent_end", 1)
		want := []string{"user:go", "assistant:", "tool:" + tools.InterruptedByAbort, "tool:hold_immune done"}
		if got := contents(h.history()); !slices.Equal(got, want) {
			t.Errorf("history = %q, want %q", got, want)
		}
		noLateText(t, h)
	})
}
