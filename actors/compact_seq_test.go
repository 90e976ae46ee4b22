package actors

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
)

// TestCompactCommandMidRun: compact while a tool runs waits for the turn
// gap: the batch ends, the compaction runs before the next request, and
// the run goes on with the compacted history; the committed index after
// it counts from the summary.
func TestCompactCommandMidRun(t *testing.T) {
	g := newGate()
	model := scriptModel(t, "", `{"turns":[{"text":"a1"},{"text":"Waiting.","tool_calls":[{"name":"hold","args":{}}]},{"text":"the user asked p1"},{"text":"Done."}]}`)
	sent := &sentRequests{}
	model.Provider = &checkedProvider{Provider: model.Provider, sent: sent}
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1", Model: model,
		Tools: demoSet(t, holdTool("hold", tools.Killable, g)), Stored: &spec.Session{System: "be brief", Context: &llm.ContextConfig{KeepRecent: new(3)}}})
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.waitFor("agent_end", 1)
	n := h.rec.Len()
	h.ok(&eventsv1.Prompt{Text: "p2"})
	h.waitFor("tool_execution_start", 1)
	h.ok(&eventsv1.Compact{})
	if ev := findType(h.since(n), "compact_start"); ev != nil {
		t.Fatalf("compaction started while the tool ran: %v", ev)
	}
	g.open()
	h.waitFor("agent_end", 2)
	toolAnswer := []string{"state_changed", "message_start", "message_delta", "response_complete", "message_committed", "token_usage"}
	eventstest.ExpectTypes(t, h.since(n), seq(runStart, toolAnswer,
		one("tool_calls", "state_changed", "agent_status", "tool_execution_start", "tool_execution_end",
			"tool_execution_metrics", "message_committed", "turn_end", "state_changed", "agent_status",
			"compact_start", "compact_end", "turn_start", "request_start"),
		answer, runEnd)...)
	if got := findType(h.since(n), "compact_end").GetCompactEnd().RemovedCount; got != 2 {
		t.Fatalf("removed_count %d, want 2", got)
	}
	last := findAll(h.since(n), "message_committed")
	if i := last[len(last)-1].GetMessageCommitted().Index; i != 4 {
		t.Fatalf("the answer after the compaction was committed at %d, want 4 (summary, p2, call, result, answer)", i)
	}
	want := []string{"user:" + SummaryPrefix + "the user asked p1", "user:p2", "assistant:Waiting.", "tool:hold done"}
	if got := contents(sent.reqs[3].Messages); !slices.Equal(got, want) {
		t.Fatalf("the request after the compaction: %q, want %q", got, want)
	}
}

// TestAbortCancelsCompaction: an abort while the run waits at its turn gap
// for a summary cancels the summary request; compact_end with 0 follows
// the run's agent_end, with no error, and the history is unchanged. An
// abort at after_tools or after_response does the same: the run is at a
// turn gap, past those points. (Such an abort used to cancel the summary
// and wait, and the run then sent its next request.)
func TestAbortCancelsCompaction(t *testing.T) {
	for _, at := range []events.At{"", events.AtAfterTools, events.AtAfterResponse} {
		t.Run("at="+string(at), func(t *testing.T) { abortCancelsCompaction(t, at) })
	}
}

func abortCancelsCompaction(t *testing.T, at events.At) {
	tool, summary := newGate(), newGate()
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1",
		Tools:        demoSet(t, holdTool("hold", tools.Killable, tool)),
		Model:        scriptModel(t, "", `{"turns":[{"tool_calls":[{"name":"hold","args":{}}]},{"text":"never"}]}`),
		CompactModel: held(t, "script:summariser", `{"turns":[{"text":"never either"}]}`, summary, 0), Stored: &spec.Session{System: "be brief", Context: &llm.ContextConfig{KeepRecent: new(0)}}})
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.waitFor("tool_execution_start", 1)
	h.ok(&eventsv1.Compact{})
	tool.open()
	h.waitFor("compact_start", 1)
	n := h.rec.Len()
	h.ok(&eventsv1.Abort{At: string(at)})
	h.waitFor("compact_end", 1)
	h.state() // anything the compaction's end set off is out
	eventstest.ExpectTypes(t, h.since(n), "agent_abort", "state_changed", "agent_status", "agent_end", "compact_end")
	if got := findType(h.since(n), "compact_end").GetCompactEnd().RemovedCount; got != 0 {
		t.Fatalf("removed_count %d, want 0", got)
	}
	if got := contents(h.history()); !slices.Equal(got, []string{"user:p1", "assistant:", "tool:hold done"}) {
		t.Fatalf("history %q", got)
	}
}

// TestAbortCancelsACompactionOfNoRun: a compaction started with no run
// in progress (the compact command in idle) is cancelled by an abort too,
// in idle or of a run that waits for it: its summary request, hung, held
// every later run at its turn gap, and no command stopped it. The prompt
// after the abort runs.
func TestAbortCancelsACompactionOfNoRun(t *testing.T) {
	for _, during := range []string{"idle", "run"} {
		t.Run(during, func(t *testing.T) {
			summary := newGate()
			sys := newSystem(t)
			h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1",
				Tools:        demoSet(t),
				Model:        scriptModel(t, "", `{"turns":[{"text":"a1"},{"text":"a2"},{"text":"a3"}]}`),
				CompactModel: held(t, "script:summariser", `{"turns":[{"text":"never"}]}`, summary, 0), Stored: &spec.Session{System: "be brief", Context: &llm.ContextConfig{KeepRecent: new(0)}}})
			h.ok(&eventsv1.Prompt{Text: "p1"})
			h.waitFor("agent_end", 1)
			h.ok(&eventsv1.Compact{})
			h.waitFor("compact_start", 1)
			runs := 1
			if during == "run" {
				h.ok(&eventsv1.Prompt{Text: "p2"}) // waits at its turn gap
				h.waitFor("agent_start", 2)
				runs++
			}
			n := h.rec.Len()
			h.ok(&eventsv1.Abort{})
			h.waitFor("compact_end", 1)
			if got := findType(h.since(n), "compact_end").GetCompactEnd().RemovedCount; got != 0 {
				t.Fatalf("removed_count %d, want 0", got)
			}
			h.ok(&eventsv1.Prompt{Text: "p3"})
			h.waitFor("agent_end", runs+1)
			if got := contents(h.history()); got[len(got)-1] != "assistant:a2" {
				t.Fatalf("history %q, want p3 answered", got)
			}
		})
	}
}

// TestAbortedRunStartsNoCompaction: a run aborted while it wanted a
// compaction (asked for mid-run) does not start it as it ends: an abort
// starts no model request. The next run makes it at its first turn gap.
func TestAbortedRunStartsNoCompaction(t *testing.T) {
	tool := newGate()
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1",
		Tools:        demoSet(t, holdTool("hold", tools.Killable, tool)),
		Model:        scriptModel(t, "", `{"turns":[{"tool_calls":[{"name":"hold","args":{}}]},{"text":"a2"}]}`),
		CompactModel: scriptModel(t, "script:summariser", `{"turns":[{"text":"the user asked p1"}]}`), Stored: &spec.Session{System: "be brief", Context: &llm.ContextConfig{KeepRecent: new(0)}}})
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.waitFor("tool_execution_start", 1)
	h.ok(&eventsv1.Compact{})
	h.ok(&eventsv1.Abort{})
	h.waitFor("agent_end", 1)
	n := h.rec.Len()
	h.ok(&eventsv1.GetState{}) // every event of the abort is out
	if ev := findType(h.since(0), "compact_start"); ev != nil {
		t.Fatalf("a compaction started as the aborted run ended: %v", ev)
	}
	h.ok(&eventsv1.Prompt{Text: "p2"})
	h.waitFor("agent_end", 2)
	types := eventstest.Types(h.since(n))
	if i, j := slices.Index(types, "compact_start"), slices.Index(types, "request_start"); i < 0 || j < i {
		t.Fatalf("the next run: %q, want the compaction before its request", types)
	}
}

// hangingProvider answers no request: each waits until its context ends,
// which it then tells.
type hangingProvider struct{ cancelled chan struct{} }

func (p hangingProvider) Stream(ctx context.Context, _ *llm.Request, _ func(llm.Chunk)) (*llm.Response, error) {
	<-ctx.Done()
	close(p.cancelled)
	return nil, ctx.Err()
}

// TestCloseCancelsACompaction: a session that stops cancels the summary
// request of a compaction it started with no run; it stayed open for the
// request's timeout (120 s over HTTP) after a close.
func TestCloseCancelsACompaction(t *testing.T) {
	summary := hangingProvider{cancelled: make(chan struct{})}
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1",
		Tools:        demoSet(t),
		Model:        scriptModel(t, "", `{"turns":[{"text":"a1"}]}`),
		CompactModel: &llm.Model{Name: "hanging", ID: "hanging", Provider: summary}, Stored: &spec.Session{System: "be brief", Context: &llm.ContextConfig{KeepRecent: new(0)}}})
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.waitFor("agent_end", 1)
	h.ok(&eventsv1.Compact{})
	h.waitFor("compact_start", 1)
	h.reg.Close("s1")
	select {
	case <-summary.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the summary request was not cancelled by the close")
	}
}
