package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
)

// batch is the tool calls of one turn. Calls run concurrently; results are
// committed together, in the order the model listed the calls.
type batch struct {
	calls   []*call
	pending int
}

// call is one tool call of a batch.
type call struct {
	tc      *llm.ToolCall
	tool    tools.Tool // nil when the call was settled before it could run
	immune  bool
	cancel  context.CancelFunc
	started time.Time
	result  *tools.Result // nil while running
}

// running reports whether the call still waits for its tool.
func (c *call) running() bool { return c.result == nil }

// startBatch validates every call, starts the valid ones, and settles the
// others at once with an error result.
func (s *session) startBatch(tcs []*llm.ToolCall) {
	b := &batch{calls: make([]*call, len(tcs))}
	s.run.batch = b
	s.emit(&eventsv1.ToolCalls{Count: int32(len(tcs))})
	s.transition(fsm.ToolCalls, fsm.ToolCalls)
	s.emit(&eventsv1.AgentStatus{Status: "tool_calling", ToolName: toolNames(tcs)})
	for i, tc := range tcs {
		b.calls[i] = &call{tc: tc}
		s.startCall(i, b.calls[i])
	}
	s.batchProgress()
}

// startCall starts one call, or settles it when the tool is unknown or the
// arguments are invalid: failures are data for the model, never a crash.
func (s *session) startCall(i int, c *call) {
	args := c.tc.GetArgs().GetJson()
	err := s.spec.Tools.Validate(c.tc.Name, args)
	if errors.Is(err, tools.ErrUnknownTool) {
		s.emit(&eventsv1.ToolCallUnknown{Name: c.tc.Name, CallId: c.tc.Id})
		c.result = &tools.Result{Content: fmt.Sprintf("unknown tool %q; available tools: %s", c.tc.Name, strings.Join(s.spec.Tools.Names(), ", ")), IsError: true}
		return
	}
	s.emit(&eventsv1.ToolExecutionStart{Name: c.tc.Name, CallId: c.tc.Id, Args: c.tc.Args})
	c.started = s.env.now()
	if err != nil {
		s.settle(c, tools.Result{Content: err.Error(), IsError: true}, c.started)
		return
	}
	c.tool, _ = s.spec.Tools.Get(c.tc.Name)
	// The kind comes from the spec the Set kept when it was built: the
	// handler runs no tool code, which could panic half-way through a batch.
	spec, _ := s.spec.Tools.Spec(c.tc.Name)
	c.immune = spec.Kind == tools.Immune
	ctx, cancel := context.WithCancel(s.run.ctx)
	if c.immune {
		// Immune tools outlive the run's cancellation; only kill_tools all
		// (through c.cancel) stops them.
		ctx, cancel = context.WithCancel(context.WithoutCancel(s.run.ctx))
	}
	c.cancel = cancel
	s.run.batch.pending++
	go runTool(ctx, s.root, s.self, c.tool, args, s.run.tag(), i, s.env.now, s.env.grace(), &s.abandoned)
}

// runTool runs one call on its own goroutine and reports back. A tool that
// ignores cancellation for longer than grace is counted as abandoned until
// it returns; its late result is dropped by the session.
func runTool(ctx context.Context, root *actor.RootContext, self *actor.PID, t tools.Tool, args []byte, tg tag, i int, now func() time.Time, grace time.Duration, abandoned *atomic.Int32) {
	const running, finished, counted = 0, 1, 2
	var st atomic.Int32
	stop := context.AfterFunc(ctx, func() {
		time.AfterFunc(grace, func() {
			if st.CompareAndSwap(running, counted) {
				abandoned.Add(1)
			}
		})
	})
	defer stop()
	res := tools.Execute(ctx, t, args, func(p string) {
		root.Send(self, &toolUpdate{tag: tg, index: i, partial: p})
	})
	if st.Swap(finished) == counted {
		abandoned.Add(-1)
	}
	root.Send(self, &toolDone{tag: tg, index: i, result: res, ended: now()})
}

// toolUpdate relays partial output of a running call.
func (s *session) toolUpdate(m *toolUpdate) {
	if !s.current(m.tag) {
		return
	}
	if c := s.run.batch.calls[m.index]; c.running() {
		s.emit(&eventsv1.ToolExecutionUpdate{Name: c.tc.Name, CallId: c.tc.Id, Partial: m.partial})
	}
}

// toolDone records a call's result, unless the call was already settled
// (killed or skipped): then the late result is dropped.
func (s *session) toolDone(m *toolDone) {
	if !s.current(m.tag) {
		return
	}
	c := s.run.batch.calls[m.index]
	if !c.running() {
		return
	}
	s.run.batch.pending--
	s.settle(c, m.result, m.ended)
	s.batchProgress()
}

// settle gives a call its result and reports its end.
func (s *session) settle(c *call, r tools.Result, ended time.Time) {
	c.result = &r
	s.emit(&eventsv1.ToolExecutionEnd{Name: c.tc.Name, CallId: c.tc.Id, Ok: !r.IsError, Result: r.Content})
	s.emit(&eventsv1.ToolExecutionMetrics{
		Name: c.tc.Name, CallId: c.tc.Id,
		StartedAtMs: c.started.UnixMilli(), EndedAtMs: ended.UnixMilli(),
		DurationMs: ended.Sub(c.started).Milliseconds(),
	})
}

// interrupt settles a running call at once with result text, cancelling its
// tool; whatever the tool does afterwards is ignored.
func (s *session) interrupt(c *call, text string) {
	c.cancel()
	s.run.batch.pending--
	s.settle(c, tools.Result{Content: text, IsError: true}, s.env.now())
}

// batchProgress commits the batch once no call is running and ends the turn.
func (s *session) batchProgress() {
	b := s.run.batch
	if b.pending > 0 {
		return
	}
	for _, c := range b.calls {
		s.commit(llm.ToolResultMessage(c.tc.Id, c.result.Content, c.result.IsError))
	}
	s.run.batch = nil
	s.turnDone(true)
}

// toolNames names the tools of a batch for agent_status.
func toolNames(tcs []*llm.ToolCall) *string {
	names := make([]string, len(tcs))
	for i, tc := range tcs {
		names[i] = tc.Name
	}
	s := strings.Join(names, ", ")
	return &s
}
