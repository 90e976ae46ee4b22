package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/internal/workers"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
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
	index  int
	tc     *llm.ToolCall
	tool   tools.Tool // nil when the call was settled before it could run
	args   []byte     // what the tool runs with, after plugins' replacements
	immune bool
	cancel context.CancelFunc
	// launched is set at each launch of the call's tool, for the
	// abandonment count (abandonLater).
	launched *launched
	started  time.Time
	attempt  int
	hold     *hold         // set while a person's answer is awaited
	sub      *subagentCall // set for a call of the subagent tool
	result   *tools.Result // nil until settled
	// committed marks a result already in the history: a paused batch
	// commits its results in call order up to its first held call.
	committed bool
}

// launched is one launch of a call's tool. The tool's goroutine sets
// toolReturned when the tool returns; a cancelled tool that has not
// returned a grace later is counted as abandoned (the session's count)
// until it does.
type launched struct {
	state   atomic.Int32 // toolRunning, toolReturned or toolCounted
	watched bool         // abandonLater set its timer (the session's goroutine only)
}

const (
	toolRunning int32 = iota
	toolReturned
	toolCounted
)

// running reports whether the call waits for its tool.
func (c *call) running() bool { return c.result == nil && c.hold == nil }

// uncommitted reports whether the call has a result the history does not
// hold yet.
func (c *call) uncommitted() bool { return c.result != nil && !c.committed }

// settledBudget bounds the results of a batch that wait behind an
// earlier call and are stored at each settle (settle).
const settledBudget = 256 << 10

// waitingBytes is the size of the batch's results that wait to be
// committed.
func (b *batch) waitingBytes() int {
	n := 0
	for _, c := range b.calls {
		if c != nil && c.uncommitted() {
			n += len(c.result.Content)
		}
	}
	return n
}

// held reports whether the call waits for a person.
func (c *call) held() bool { return c.result == nil && c.hold != nil }

// maxAttempts bounds how often plugins may retry one call.
const maxAttempts = 10

// MaxBatchCalls is how many tool calls of one response run: a call past
// it is settled at once with an error result (tooManyCalls) that tells
// the model to call it again later. Without a bound, one response (a
// script's turn) made as many goroutines, threads or processes as it
// listed calls, for every user of a server at once.
const MaxBatchCalls = 128

// tooManyCalls is the result of a call past MaxBatchCalls.
var tooManyCalls = fmt.Sprintf("not run: a response may call at most %d tools; call it again in a later turn", MaxBatchCalls)

// startBatch validates every call, starts the valid ones, and settles the
// others at once with an error result. It asks the plugins about each
// call in turn, up to a budget each (plugins.DefaultBudget), so before
// each call it looks for an abort waiting in the mailbox: once one waits,
// the calls left are settled as interrupted, started by no one, and the
// batch is left for the abort to end. A plugin that took 40 ms a call
// held an abort behind a batch of 50 calls for two seconds.
func (s *session) startBatch(tcs []*llm.ToolCall) {
	b := &batch{calls: make([]*call, len(tcs))}
	s.run.batch = b
	s.emit(&eventsv1.ToolCalls{Count: int32(len(tcs))})
	s.transition(fsm.ToolCalls, fsm.ToolCalls)
	s.emit(&eventsv1.AgentStatus{Status: string(events.StatusToolCalling), ToolName: toolNames(tcs)})
	var stop *plugins.Decision
	aborting := false
	for i, tc := range tcs {
		c := &call{tc: tc, index: i}
		b.calls[i] = c
		aborting = aborting || (stop == nil && s.home.box.holds(stopsNow))
		if stop != nil || aborting || i >= MaxBatchCalls {
			text := tooManyCalls
			if stop != nil || aborting {
				text = tools.InterruptedByAbort
			}
			s.emit(&eventsv1.ToolExecutionStart{Name: tc.Name, CallId: tc.Id, Args: tc.Args})
			c.started = s.home.env.now()
			s.settle(c, tools.Result{Content: text, IsError: true}, c.started)
			continue
		}
		stop = s.startCall(c)
	}
	switch {
	case stop != nil:
		s.abortBy(stop)
	case !aborting:
		s.batchProgress()
	}
}

// stopsNow reports whether msg is an abort that stops a batch at once:
// any the session takes (its options are valid) but one that waits for
// the tools (at after_tools).
func stopsNow(msg any) bool {
	m, ok := unwrap(msg).(*eventsv1.Abort)
	return ok && events.At(m.At) != events.AtAfterTools && events.CheckAbort(m) == nil
}

// startCall starts one call, or settles it when the tool is unknown, the
// arguments are invalid or a plugin blocks it: failures are data for the
// model, never a crash. A plugin may also hold the call for a person, or
// abort the run, which startCall returns for the batch to act on.
func (s *session) startCall(c *call) (abort *plugins.Decision) {
	c.args = c.tc.GetArgs().GetJson()
	err := s.spec.Tools.Validate(c.tc.Name, c.args)
	if errors.Is(err, tools.ErrUnknownTool) {
		s.emit(&eventsv1.ToolCallUnknown{Name: c.tc.Name, CallId: c.tc.Id})
		c.result = &tools.Result{Content: fmt.Sprintf("unknown tool %q; available tools: %s", c.tc.Name, strings.Join(s.spec.Tools.Names(), ", ")), IsError: true}
		return nil
	}
	s.emit(&eventsv1.ToolExecutionStart{Name: c.tc.Name, CallId: c.tc.Id, Args: c.tc.Args})
	c.started = s.home.env.now()
	if err == nil {
		abort, err = s.toolHook(c)
	}
	switch {
	case abort != nil:
		s.settle(c, tools.Result{Content: tools.InterruptedByAbort, IsError: true}, c.started)
	case err != nil:
		s.settle(c, tools.Result{Content: err.Error(), IsError: true}, c.started)
	case c.hold == nil:
		s.launch(c)
	}
	return abort
}

// toolHook asks before_tool: plugins may replace the arguments (checked
// against the schema again), block the call, hold it for a person, or
// abort the run.
func (s *session) toolHook(c *call) (*plugins.Decision, error) {
	out := s.hook(&plugins.Event{Hook: plugins.BeforeTool, Call: c.tc})
	if out.Args != nil {
		if err := s.spec.Tools.Validate(c.tc.Name, out.Args); err != nil {
			return nil, err
		}
		c.args = out.Args
	}
	d := out.Stop
	if d == nil {
		return nil, nil
	}
	switch d.Action.Kind {
	case plugins.BlockTool:
		reason := d.Action.Reason
		if reason == "" {
			reason = "blocked by plugin " + d.Plugin
		}
		s.emit(&eventsv1.ToolBlocked{Name: c.tc.Name, CallId: c.tc.Id, Reason: reason})
		return nil, errors.New("blocked: " + reason)
	case plugins.HoldForApproval:
		if !s.allowedAlways(c.tc.Name, d.Action.Family) {
			s.holdForApproval(c, d)
		}
	case plugins.Ask:
		if i := slices.IndexFunc(s.run.batch.calls, func(o *call) bool { return o != nil && o.held() && o.hold.question }); i >= 0 {
			// A session waits on one question at a time (get_state's
			// pending_question, the store's): the model asks again.
			return nil, fmt.Errorf("question %s waits for its answer: ask one question at a time", s.run.batch.calls[i].hold.id)
		}
		s.ask(c, d)
	case plugins.Abort:
		return d, nil
	}
	return nil, nil
}

// launch runs a call's tool on a goroutine of its own.
func (s *session) launch(c *call) {
	c.tool, _ = s.spec.Tools.Get(c.tc.Name)
	// The kind comes from the spec the Set kept when it was built: the
	// handler runs no tool code, which could panic half-way through a batch.
	spec, _ := s.spec.Tools.Spec(c.tc.Name)
	c.immune = spec.Kind == tools.Immune
	c.attempt++
	if _, ok := c.tool.(subagentTool); ok {
		s.launchSubagent(c)
		return
	}
	ctx, cancel := context.WithCancel(s.run.ctx)
	if c.immune {
		// Immune tools outlive the run's cancellation; only kill_tools all
		// (through c.cancel) stops them.
		ctx, cancel = context.WithCancel(context.WithoutCancel(s.run.ctx))
	}
	c.cancel = cancel
	ctx = tools.WithSession(ctx, s.spec.ID)
	s.run.batch.pending++
	if c.tool == nil { // detached while the call waited for an approval
		s.home.post(&toolDone{tag: s.run.tag(), index: c.index, ended: s.home.env.now(),
			result: tools.Result{Content: notAttached(c.tc.Name), IsError: true}})
		return
	}
	c.launched = &launched{}
	home, tool, args, tg, i, now, l, abandoned := s.home, c.tool, c.args, s.run.tag(), c.index, s.home.env.now, c.launched, &s.load.abandoned
	workers.Go(func() { runTool(ctx, home, tool, args, tg, i, now, l, abandoned) })
}

// runTool runs one call on a goroutine of its own (a worker's) and
// reports back. A tool the session counted as abandoned (abandonLater)
// leaves the count when it returns; its late result is dropped by the
// session.
func runTool(ctx context.Context, home home, t tools.Tool, args []byte, tg tag, i int, now func() time.Time, l *launched, abandoned *atomic.Int32) {
	pr := &progress{}
	res := tools.Execute(ctx, t, args, func(p string) {
		if pr.add(p) {
			home.post(&toolUpdate{tag: tg, index: i, progress: pr})
		}
	})
	if l.state.Swap(toolReturned) == toolCounted {
		abandoned.Add(-1)
	}
	home.post(&toolDone{tag: tg, index: i, result: res, ended: now()})
}

// cancelTool cancels a call's tool, and counts it as abandoned if it
// ignores that for longer than the grace.
func (s *session) cancelTool(c *call) {
	c.cancel()
	s.abandonLater(c)
}

// abandonLater counts the call's tool, whose context was cancelled, as
// abandoned if it still runs Env.ToolGrace from now, until it returns.
// The session cancels every running tool through here (cancelTool,
// cancelRun), so a tool pays for no watch of its context: finishRun's
// cancel of the run's context finds none of its tools running, since a
// run ends only once its batch has no tool left running (an immune tool
// has a context of its own).
func (s *session) abandonLater(c *call) {
	l := c.launched
	if l == nil || l.watched || l.state.Load() != toolRunning {
		return
	}
	l.watched = true
	abandoned := &s.load.abandoned
	time.AfterFunc(s.home.env.grace(), func() {
		if l.state.CompareAndSwap(toolRunning, toolCounted) {
			abandoned.Add(1)
		}
	})
}

// toolUpdate relays partial output of a running call.
func (s *session) toolUpdate(m *toolUpdate) {
	if !s.current(m.tag) {
		return
	}
	if c := s.run.batch.calls[m.index]; c.running() {
		if partial := m.progress.take(); partial != "" {
			s.emit(&eventsv1.ToolExecutionUpdate{Name: c.tc.Name, CallId: c.tc.Id, Partial: partial})
		}
	}
}

// toolDone records a call's result, unless the call was already settled
// (killed or skipped): then the late result is dropped. Plugins may retry
// a failed call, replace its result or abort the run.
func (s *session) toolDone(m *toolDone) {
	if !s.current(m.tag) {
		return
	}
	c := s.run.batch.calls[m.index]
	if !c.running() {
		return
	}
	s.run.batch.pending--
	s.todoWritten(c, &m.result)
	// Hooks get copies of the result that the actor never writes: a plugin
	// that overran its budget may still be reading them.
	res := m.result
	if res.IsError {
		failed := res
		out := s.hook(&plugins.Event{Hook: plugins.OnToolError, Call: c.tc, Result: &failed, Attempt: c.attempt})
		if d := out.Stop; d != nil && d.Action.Kind == plugins.Retry && c.attempt < maxAttempts {
			s.endSubagent(c, res.Content)
			s.launch(c)
			return
		} else if d != nil && d.Action.Kind == plugins.Abort {
			s.settle(c, res, m.ended)
			s.abortBy(d)
			return
		}
	}
	done := res
	out := s.hook(&plugins.Event{Hook: plugins.AfterTool, Call: c.tc, Result: &done})
	if out.Result != nil {
		res = *out.Result
	}
	s.settle(c, res, m.ended)
	if d := out.Stop; d != nil {
		s.abortBy(d)
		return
	}
	s.batchProgress()
}

// settle gives a call its result, to be stored, and reports its end.
func (s *session) settle(c *call, r tools.Result, ended time.Time) {
	c.result = &r
	// The result is stored (Volatile.Settled, until the batch commits)
	// before tool_execution_end tells it: a crash must not take it back.
	// Each write stores every result that waits behind an earlier call,
	// so past settledBudget of them the results wait for the batch's
	// commit instead: a batch of 127 results of 1 MiB settling one by one
	// behind a slow call wrote 8 GB.
	if b := s.run.batch; b == nil || b.waitingBytes() <= settledBudget {
		s.touch()
	}
	s.endSubagent(c, r.Content)
	if c.tool != nil {
		s.home.env.observer().ToolDone(c.tc.Name, ended.Sub(c.started), !r.IsError)
	}
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
	s.cancelTool(c)
	s.run.batch.pending--
	s.settle(c, tools.Result{Content: text, IsError: true}, s.home.env.now())
}

// batchProgress commits the batch once no call is running and none is
// held, and ends the turn. When only held calls are left, the session
// pauses, idle, until a person answers.
func (s *session) batchProgress() {
	b := s.run.batch
	if b.pending > 0 {
		return
	}
	if b.holding() {
		if w := s.run.ctl.waiting; w != nil {
			// An abort waits for the batch, which now waits for a
			// person: it acts now, as one that comes to a paused run.
			s.stopNow(&eventsv1.Abort{KillTools: string(w.killTools)}, events.EndAborted)
			return
		}
		s.pause()
		return
	}
	if !s.run.aborted {
		s.batchHook(b)
	}
	s.commitSettled(b)
	s.run.batch = nil
	s.turnDone(true)
}

// batchHook asks after_tool_batch; an abort takes effect once the results
// are committed.
func (s *session) batchHook(b *batch) {
	if !s.hooks.chain.Has(plugins.AfterToolBatch) {
		return
	}
	results := make([]plugins.CallResult, len(b.calls))
	for i, c := range b.calls {
		results[i] = plugins.CallResult{Call: c.tc, Result: *c.result}
	}
	if d := s.hook(&plugins.Event{Hook: plugins.AfterToolBatch, Results: results}).Stop; d != nil {
		s.pluginAborted(d)
	}
}

// toolCalls lists the batch's calls.
func (b *batch) toolCalls() []*llm.ToolCall {
	tcs := make([]*llm.ToolCall, len(b.calls))
	for i, c := range b.calls {
		tcs[i] = c.tc
	}
	return tcs
}

// holding reports whether a call of the batch waits for a person.
func (b *batch) holding() bool {
	for _, c := range b.calls {
		if c.held() {
			return true
		}
	}
	return false
}

// orAborted is reason, or "aborted" when a plugin gave none.
func orAborted(reason string) string {
	if reason == "" {
		return string(events.EndAborted)
	}
	return reason
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
