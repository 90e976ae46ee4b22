package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/tools"
)

// toolBatch is what a session emits from its creation until a one-call
// batch has started and ended, its result committed, the turn over.
var toolBatch = seq(heldPrefixFor("tool"), toolEnd, one("message_committed", "turn_end"))

func TestToolPanics(t *testing.T) {
	boom := tools.Define(tools.Spec{Name: "boom", Description: "Panics."},
		func(context.Context, json.RawMessage, func(string)) (string, error) { panic("kaboom") })
	h := newHarness(t, `{"turns":[{"tool_calls":[{"name":"boom"}]},{"text":"after"}]}`, nil, boom)
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	h.expect(seq(toolBatch, nextTurn, answer, runEnd)...)
	if e := h.waitToolEnd("c-1").GetToolExecutionEnd(); e.GetOk() || e.GetResult() != "tool panicked: kaboom" {
		t.Errorf("tool_execution_end = %v", e)
	}
	want := []string{"user:go", "assistant:", "tool:tool panicked: kaboom", "assistant:after"}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	if end := h.waitFor("agent_end", 1).GetAgentEnd(); end.GetReason() != string(events.EndCompleted) {
		t.Errorf("agent_end = %v", end)
	}
}

// TestHandlerPanics: a panic inside the session's handler (here a tool
// report for a call the batch does not have, which only a runtime bug
// could send) becomes an internal error event; the session answers, keeps
// its history, and its run goes on.
func TestHandlerPanics(t *testing.T) {
	g := newGate()
	h := newHarness(t, `{"turns":[{"tool_calls":[{"name":"hold"}]},{"text":"after"}]}`, nil,
		holdTool("hold", tools.Killable, g))
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("tool_execution_start", 1)
	before, history, n := h.state(), contents(h.messages()), h.rec.Len()

	h.sys.Root.Send(h.pid, &toolDone{tag: tag{run: 1, turn: 1}, index: 7})
	h.drain()

	st := h.state()
	if got := h.rec.Types()[n:]; !slices.Equal(got, []string{"error"}) {
		t.Fatalf("events after the panic = %q, want one error", got)
	}
	if e := h.rec.Events()[n].GetError(); e.GetCode() != events.CodeInternal || !strings.Contains(e.GetMessage(), "index out of range") {
		t.Errorf("error = %v", e)
	}
	if st.State != before.State || st.GetRunId() != before.GetRunId() || len(st.RunningTools) != 1 {
		t.Errorf("get_state after the panic = %v, before %v", st, before)
	}
	if got := contents(h.messages()); !slices.Equal(got, history) {
		t.Errorf("history after the panic = %q, want %q", got, history)
	}

	g.open()
	h.waitFor("agent_end", 1)
	want := []string{"user:go", "assistant:", "tool:hold done", "assistant:after"}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
}

// specOnce is a tool whose Spec works once (when the Set is built) and
// panics afterwards, like a tool whose description comes from a
// connection that has since gone away.
type specOnce struct{ calls atomic.Int32 }

func (s *specOnce) Spec() tools.Spec {
	if s.calls.Add(1) > 1 {
		panic("spec unavailable")
	}
	return tools.Spec{Name: "flaky", Description: "Works; its Spec does not.", Kind: tools.Immune}
}

func (s *specOnce) Run(context.Context, json.RawMessage, func(string)) (string, error) {
	return "flaky ran", nil
}

// TestToolSpecReadFromSet: the session takes a tool's kind from the Set,
// so it runs no tool code in its handler. (It used to call Spec while
// starting a batch; a panic there left a half-built batch behind, and the
// session stopped answering even get_state.)
func TestToolSpecReadFromSet(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"tool_calls":[{"name":"echo","args":{"text":"x"}},{"name":"flaky"},{"name":"echo","args":{"text":"y"}}]},
		{"text":"done"}]}`, nil, &specOnce{})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	want := []string{"user:go", "assistant:", "tool:x", "tool:flaky ran", "tool:y", "assistant:done"}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	checkLog(t, h.rec.Events())
}

func TestUnknownTool(t *testing.T) {
	h := newHarness(t, `{"turns":[{"tool_calls":[{"name":"teleport","args":{"to":"mars"}}]},{"text":"sorry"}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	// No tool runs: the call is settled at once, without start or end.
	h.expect(seq(heldPrefixFor(), one("tool_call_unknown", "message_committed", "turn_end"), nextTurn, answer, runEnd)...)
	if u := h.waitFor("tool_call_unknown", 1).GetToolCallUnknown(); u.GetName() != "teleport" || u.GetCallId() != "c-1" {
		t.Errorf("tool_call_unknown = %v", u)
	}
	msgs := h.history()
	res := msgs[2]
	wantText := `unknown tool "teleport"; available tools: echo, shell, sleep, sleep_immune, sleep_stubborn`
	if !res.IsError || res.Content != wantText || res.ToolCallId != "c-1" {
		t.Errorf("result = %v, want error %q", res, wantText)
	}
}

func TestInvalidToolArgs(t *testing.T) {
	h := newHarness(t, `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":"soon"}}]},{"text":"oops"}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	h.expect(seq(toolBatch, nextTurn, answer, runEnd)...)
	e := h.waitToolEnd("c-1").GetToolExecutionEnd()
	const wantText = "invalid arguments for sleep: /ms: got string, want integer"
	if e.GetOk() || e.GetResult() != wantText {
		t.Errorf("tool_execution_end = %v, want error %q", e, wantText)
	}
	if res := h.history()[2]; !res.IsError || res.Content != wantText {
		t.Errorf("result = %v", res)
	}
}

// TestTooManyToolCalls: a response's calls past MaxBatchCalls are not
// run; each gets an error result saying so, in order with the others, and
// the run goes on. One script turn of 10,000 read_file calls on a named
// pipe pinned 10,000 threads and killed the server before.
func TestTooManyToolCalls(t *testing.T) {
	const n = MaxBatchCalls + 3
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"name":"echo","args":{"text":"%d"}}`, i)
	}
	h := newHarness(t, `{"turns":[{"tool_calls":[`+strings.Join(calls, ",")+`]},{"text":"done"}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "go"})
	if end := h.waitFor("agent_end", 1).GetAgentEnd(); end.Reason != "completed" {
		t.Fatalf("agent_end %v", end)
	}
	results := h.history()[2 : 2+n]
	for i, r := range results {
		want := fmt.Sprint(i)
		if i >= MaxBatchCalls {
			want = tooManyCalls
		}
		if r.Content != want || r.IsError != (i >= MaxBatchCalls) {
			t.Fatalf("result %d: %q (error %v), want %q", i, r.Content, r.IsError, want)
		}
	}
}

func TestStreamErrorMidStream(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"text":"partial answer","chunk_size":4,"error":{"status":503,"message":"overloaded"}},
		{"text":"recovered"}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	deltas := one("message_delta", "message_delta", "message_delta", "message_delta") // part, ial , answ, er
	h.expect(seq(one("session_created"), runStart, one("state_changed", "message_start"), deltas,
		one("message_committed", "stream_error"), runEnd)...)
	if e := h.waitFor("stream_error", 1).GetStreamError(); e.GetError() != "HTTP 503: overloaded" {
		t.Errorf("stream_error = %v", e)
	}
	if end := h.waitFor("agent_end", 1).GetAgentEnd(); end.GetReason() != string(events.EndError) {
		t.Errorf("agent_end = %v", end)
	}
	want := []string{"user:go", "assistant:partial answer" + interruptedSuffix}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	usableAfterError(t, h, "recovered")
}

func TestModelErrorBeforeOutput(t *testing.T) {
	h := newHarness(t, `{"turns":[{"error":{"status":429,"message":"rate limited"}},{"text":"recovered"}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	h.expect(seq(one("session_created"), runStart, one("error"), runEnd)...)
	if e := h.waitFor("error", 1).GetError(); e.GetCode() != "model_error" || e.GetMessage() != "HTTP 429: rate limited" {
		t.Errorf("error = %v", e)
	}
	if end := h.waitFor("agent_end", 1).GetAgentEnd(); end.GetReason() != string(events.EndError) {
		t.Errorf("agent_end = %v", end)
	}
	if got, want := contents(h.history()), []string{"user:go"}; !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	usableAfterError(t, h, "recovered")
}

// flakyProvider misbehaves on its first request, then plays next.
type flakyProvider struct {
	llm.Provider
	first atomic.Bool
	fail  func(emit func(llm.Chunk)) *llm.Response
}

func (p *flakyProvider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	if p.first.CompareAndSwap(false, true) {
		return p.fail(emit), nil
	}
	return p.Provider.Stream(ctx, req, emit)
}

// TestProviderMisbehaves: a provider that panics or answers nothing fails
// its request like a provider error; it neither crashes the process (a
// panic on the stream goroutine used to) nor breaks the session.
func TestProviderMisbehaves(t *testing.T) {
	cases := []struct {
		name    string
		fail    func(emit func(llm.Chunk)) *llm.Response
		events  []string
		message string
		history []string
	}{
		{
			name: "panic_after_output",
			fail: func(emit func(llm.Chunk)) *llm.Response {
				emit(llm.Chunk{Kind: llm.ChunkText, Text: "half"})
				panic("provider bug")
			},
			events:  one("state_changed", "message_start", "message_delta", "message_committed", "stream_error"),
			message: "provider panicked: provider bug",
			history: []string{"user:go", "assistant:half" + interruptedSuffix},
		},
		{
			name:    "panic_before_output",
			fail:    func(func(llm.Chunk)) *llm.Response { panic("provider bug") },
			events:  one("error"),
			message: "provider panicked: provider bug",
			history: []string{"user:go"},
		},
		{
			name:    "no_response",
			fail:    func(func(llm.Chunk)) *llm.Response { return nil },
			events:  one("error"),
			message: "provider returned no response",
			history: []string{"user:go"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := scriptModel(t, "", `{"turns":[{"text":"recovered"}]}`)
			m.Provider = &flakyProvider{Provider: m.Provider, fail: tc.fail}
			h := newHarnessModel(t, m, nil)
			h.ok(&eventsv1.Prompt{Text: "go"})
			h.waitFor("agent_end", 1)
			h.expect(seq(one("session_created"), runStart, tc.events, runEnd)...)
			last := h.waitFor(tc.events[len(tc.events)-1], 1)
			if got := last.GetStreamError().GetError() + last.GetError().GetMessage(); got != tc.message {
				t.Errorf("reported %q, want %q", got, tc.message)
			}
			if got := contents(h.history()); !slices.Equal(got, tc.history) {
				t.Errorf("history = %q, want %q", got, tc.history)
			}
			usableAfterError(t, h, "recovered")
		})
	}
}

// usableAfterError checks that the run ended with an error and that the
// session then completes a prompt with the answer text.
func usableAfterError(t *testing.T, h *harness, text string) {
	t.Helper()
	if end := h.waitFor("agent_end", 1).GetAgentEnd(); end.GetReason() != string(events.EndError) {
		t.Errorf("agent_end = %v, want reason error", end)
	}
	if st := h.state(); st.State != "idle" || st.RunId != nil {
		t.Errorf("state after the error = %v", st)
	}
	n := len(h.history())
	mark := h.rec.Len()
	h.ok(&eventsv1.Prompt{Text: "again"})
	h.waitFor("agent_end", 2)
	expectLabelled(t, "the next prompt", h.since(mark), seq(runStart, answer, runEnd))
	if got := contents(h.history()[n:]); !slices.Equal(got, []string{"user:again", "assistant:" + text}) {
		t.Errorf("next run committed %q", got)
	}
	checkLog(t, h.rec.Events())
}

// panicSink panics at the first message_delta it is given.
type panicSink struct{ done atomic.Bool }

func (p *panicSink) Deliver(ev *eventsv1.Event) {
	if ev.GetMessageDelta() != nil && p.done.CompareAndSwap(false, true) {
		panic("sink failed")
	}
}

// TestPanicBeyondTheHandlerResumes: a panic that escapes the handler's
// recovery — here a sink's, while a stored session tells a delta after
// its handler returned — resumes the same session. protoactor's default,
// a restart, would have made a new session value: its history gone, a
// second session_created told, the run never ended.
func TestPanicBeyondTheHandlerResumes(t *testing.T) {
	h := storedHarness(t, memory.New(), Spec{Model: scriptModel(t, "", `{"turns":[{"text":"hello"},{"text":"again"}]}`), Tools: demoSet(t)})
	sink := &panicSink{}
	h.ok(&SubscribeSink{Sink: sink, Since: 0})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	if !sink.done.Load() {
		t.Fatal("the sink never panicked")
	}
	h.ok(&eventsv1.Prompt{Text: "more"})
	h.waitFor("agent_end", 2)
	if got, want := contents(h.history()), []string{"user:go", "assistant:hello", "user:more", "assistant:again"}; !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	evs := h.ok(&eventsv1.Subscribe{Since: 0}).GetEvents().GetEvents()
	created := 0
	for _, ev := range evs {
		if ev.GetSessionCreated() != nil {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d session_created events, want 1", created)
	}
}
