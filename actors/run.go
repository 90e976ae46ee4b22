package actors

import (
	"context"
	"strconv"

	"github.com/tack-run/tack/actors/history"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/internal/workers"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/inlinetag"
	"github.com/tack-run/tack/plugins"
)

// run is what a session knows about the run in progress.
type run struct {
	n      uint64
	id     string
	turn   int32
	usage  tally
	ctx    context.Context
	cancel context.CancelFunc
	// stream is the response being streamed in this turn; nil between requests.
	stream *partial
	// batch is the tool batch of this turn; nil outside executing_tools.
	batch *batch
	// aborted is set once agent_abort was emitted for this run;
	// killTools is what the user's abort said of tools.
	aborted   bool
	killTools events.KillTools
	// awaitCompact is set while the run's next request waits for a
	// compaction; overflowed once a context overflow was retried after a
	// compaction (cleared by the next response).
	awaitCompact bool
	overflowed   bool
	// end, when set, is the reason the run ends with at its next boundary:
	// after an abort, once the last tool that survived it is done; after a
	// rejected approval, once the batch is done.
	end events.EndReason
	// ctl is conversation control's (control.go).
	ctl control
}

func (r *run) tag() tag { return tag{run: r.n, turn: r.turn} }

// newRun starts run number n, named id or else r-n.
func newRun(n uint64, id string) *run {
	if id == "" {
		id = "r-" + strconv.FormatUint(n, 10)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &run{n: n, id: id, ctx: ctx, cancel: cancel}
}

// cancelRun stops the stream of r, every tool of r, immune ones too, and
// every wait for an approval.
func (s *session) cancelRun(r *run) {
	r.cancel()
	if r.batch != nil {
		for _, c := range r.batch.calls {
			if c.cancel != nil {
				s.cancelTool(c)
			}
			if c.hold != nil && c.hold.timer != nil {
				c.hold.timer.Stop()
			}
		}
	}
}

// current reports whether a goroutine's report belongs to the current turn.
func (s *session) current(t tag) bool {
	return s.run != nil && s.run.tag() == t
}

// startRun begins a run in idle with text as the newest user input; what an
// earlier abort left queued is delivered first, in order.
func (s *session) startRun(in input) {
	s.touch() // the run's start and its prompt are stored before they are told
	s.emit(&eventsv1.PromptReceived{Text: in.text})
	s.notes.ids.Runs++
	s.run = newRun(s.notes.ids.Runs, "")
	s.countRun()
	s.home.env.observer().RunStarted()
	s.emit(&eventsv1.AgentStart{RunId: s.run.id})
	s.run.ctl.from = s.hist.Len()
	for _, m := range s.queued(in) {
		s.commit(m)
	}
	s.startTurn()
}

// startTurn applies queued steering and sends the next model request,
// unless a plugin stops it.
func (s *session) startTurn() {
	s.applySteering()
	s.transition(fsm.Start, fsm.NextTurn)
	s.emit(statusThinking)
	if s.awaitCompaction() {
		return
	}
	s.sendRequest()
}

// sendRequest sends the turn's model request, unless a plugin stops it.
func (s *session) sendRequest() {
	if !s.requestHook() {
		return
	}
	s.applyInterventions()
	s.run.turn++
	s.emit(&eventsv1.TurnStart{RunId: s.run.id, Turn: s.run.turn})
	req := s.request()
	s.emit(&eventsv1.RequestStart{Turn: s.run.turn, Model: s.spec.Model.Name, MessageCount: int32(len(req.Messages))})
	s.run.stream = &partial{model: s.spec.Model, req: req}
	if s.home.env.Unloaded() != nil {
		s.run.stream.modelState = modelState(s.spec.Model)
	}
	ctx, home, prov, tg := s.run.ctx, s.home, s.spec.Model.Provider, s.run.tag()
	workers.Go(func() { pump(ctx, home, prov, req, tg) })
}

// endTurn reports the end of a turn, to subscribers and to plugins.
func (s *session) endTurn() {
	s.emit(&eventsv1.TurnEnd{RunId: s.run.id, Turn: s.run.turn})
	reason := events.EndCompleted
	if s.run.aborted {
		reason = events.EndAborted
	}
	s.hook(&plugins.Event{Hook: plugins.AfterTurn, Reason: string(reason)})
}

// transition fires idleEvent in idle and busyEvent otherwise.
func (s *session) transition(idleEvent, busyEvent fsm.Event) {
	e := busyEvent
	if s.machine.Current() == fsm.Idle {
		e = idleEvent
	}
	s.fire(e)
}

// fire moves the state machine and tells subscribers.
func (s *session) fire(e fsm.Event) {
	from, to, err := s.machine.Fire(e)
	if err != nil {
		panic(err) // a bug in a handler: recoverPanic reports it
	}
	if from != to {
		s.notes.updated = s.stamp()
		s.home.env.observer().StateChanged(from, to)
		s.emit(stateChanged(from, to))
	}
}

// applySteering merges queued steering into the context as user messages.
func (s *session) applySteering() {
	if len(s.q.Steering()) == 0 {
		return
	}
	msgs, refs := s.q.TakeSteering()
	for _, m := range msgs {
		s.commit(m)
	}
	s.emit(&eventsv1.SteeringApplied{Refs: refs, Count: int32(len(refs))})
}

// request builds the next model request from the history, repaired if it
// ever needs to be (it should not: the repair is defence in depth). The
// history only grows, and at each request every tool call in it has its
// result, so the pass checks what was added since the last request; a
// prefix that needed fixing stays unchecked, so it is fixed (and logged)
// again on every request.
func (s *session) request() *llm.Request {
	msgs, fixes := s.hist.Repaired()
	if len(fixes) > 0 {
		s.home.env.logger().Sugar().Errorw("history needed repair before a request; this is a runtime bug",
			"session", s.spec.ID, "fixes", fixes)
	}
	before := s.hist.CallsOutside()
	if c := s.spec.Stored.Context; c != nil {
		window := llm.Trim(msgs, c.MaxMessages, s.budget(c))
		before += history.CountCalls(msgs[:len(msgs)-len(window)])
		msgs = window
	}
	return &llm.Request{
		Model:       s.spec.Model.ID,
		System:      s.spec.Stored.System,
		Messages:    msgs,
		Tools:       s.home.env.toolSpecs(s.spec.Tools),
		CallsBefore: before,
	}
}

// budget is the token budget of the next request's history, in the
// 4-bytes-a-token estimate: the configured budget less the system prompt,
// scaled by how the provider's reported usage of the last request compared
// with its estimate. 0 means no limit.
func (s *session) budget(c *llm.ContextConfig) int64 {
	b := c.Budget(s.spec.Model.ContextWindow)
	if b == 0 {
		return 0
	}
	if scale := s.notes.usage().tokenScale; scale > 0 {
		b = int64(float64(b) / scale)
	}
	return max(b-llm.EstimateTokens(s.spec.Stored.System), 1)
}

// commit appends a message to the history: a commit point, which the
// store keeps before message_committed is told.
func (s *session) commit(m *llm.Message) {
	s.touch()
	if s.notes.title == "" && m.Role == "user" {
		s.notes.title = inlinetag.CutTitle(m.Content)
	}
	s.emit(&eventsv1.MessageCommitted{Index: int32(s.hist.Commit(m)), Message: m})
}

// turnDone ends a turn whose response and tools are committed. After a
// tool batch the run goes on; after a plain answer it goes on only for
// queued steering, a plugin's intervention or a queued prompt (one prompt,
// one turn); otherwise plugins are asked before it finishes.
func (s *session) turnDone(afterTools bool) {
	s.endTurn()
	switch {
	case s.run.end != "" && s.run.aborted:
		s.finishRun(fsm.Abort, s.run.end)
	case s.run.end != "":
		s.finishRun(fsm.Finish, s.run.end)
	case afterTools, len(s.q.Steering()) > 0, len(s.hooks.interventions()) > 0:
		s.startTurn()
	case len(s.q.Prompts()) > 0:
		s.commit(s.nextQueued())
		s.startTurn()
	case !s.finishHook():
		s.finishRun(fsm.Finish, events.EndCompleted)
	}
}

// finishRun ends the run and goes idle (a run paused for a person's
// answer is idle already).
func (s *session) finishRun(e fsm.Event, reason events.EndReason) {
	s.touch() // the store keeps that no run is in progress before agent_end is told
	r := s.run
	r.cancel()
	s.run = nil
	if s.machine.Current() != fsm.Idle {
		s.fire(e)
		s.emit(statusIdle)
	}
	s.home.env.observer().RunEnded(reason)
	s.uncountRun()
	s.endControl(r)
	s.emit(&eventsv1.AgentEnd{RunId: r.id, Reason: string(reason), Usage: r.usage.proto()})
	s.trimLater()
	// A compaction the run wanted starts now, unless the run was aborted:
	// an abort starts no model request. The next run's first turn gap
	// makes it then.
	if s.compaction.wanted && s.compaction.running == nil && !r.aborted {
		s.compaction.wanted = false
		s.startCompaction(false)
	}
	s.afterRun(r)
}

// trimLater shrinks the event buffer of a session that stays idle: a
// session that ran keeps up to RingSize events for replay, a few hundred
// KiB, which idle sessions by the thousand cannot afford.
//
// One timer is pending at a time (an older one would find a newer run and
// do nothing), and shutdown stops it: a pending timer holds the session's
// PID, and through it a stopped session's memory.
func (s *session) trimLater() {
	if s.load.trim == nil {
		home := s.home
		s.load.trim = s.home.env.trimLine().Entry(func(runs uint64) { home.post(&idleTrim{runs: runs}) })
	}
	s.load.trim.Start(s.notes.ids.Runs)
}

// trim shrinks the buffer if no run started since the timer was set.
func (s *session) trim(m *idleTrim) {
	if s.run == nil && s.notes.ids.Runs == m.runs {
		s.out.log.Trim(s.home.env.idleKeep())
	}
}
