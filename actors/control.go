package actors

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors/history"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
)

// Conversation control (docs/control.md): what a prompt does while a run
// is in progress (if_busy), aborts that wait for a safe point (at), and
// how queued prompts reach the model (queue_mode). Rollback and fork have
// files of their own.

// QueueJoin separates the queued prompts that queue_mode all delivers as
// one user message.
const QueueJoin = "\n\n"

// promptAtIdle: at idle every if_busy starts a run; a run paused for a
// person's answer counts as busy for reject (error busy) and rollback
// (its messages leave the working history before the new run starts).
func (s *session) promptAtIdle(ctx actor.Context, m *eventsv1.Prompt) {
	switch {
	case s.run != nil && events.IfBusy(m.IfBusy) == events.IfBusyReject:
		s.failBusy(ctx)
	default:
		if s.out.trace != nil && m.Traceparent != "" {
			s.out.trace.Parent(m.Traceparent)
		}
		s.promptIdle(ctx, inputOf(m), s.run != nil && events.IfBusy(m.IfBusy) == events.IfBusyRollback)
	}
}

// promptBusy is a prompt while a run is in progress, as if_busy says.
func (s *session) promptBusy(ctx actor.Context, m *eventsv1.Prompt) {
	switch ifBusy := events.IfBusy(m.IfBusy); ifBusy {
	case events.IfBusySteer:
		s.queueSteer(ctx, inputOf(m), s.run.batch != nil)
	case events.IfBusyReject:
		s.failBusy(ctx)
	case events.IfBusyInterrupt, events.IfBusyRollback:
		s.restart(ctx, inputOf(m), ifBusy == events.IfBusyRollback)
	default:
		s.queuePrompt(ctx, inputOf(m))
	}
}

// failBusy answers a prompt with if_busy reject: nothing changes.
func (s *session) failBusy(ctx actor.Context) {
	s.fail(ctx, events.CodeBusy, fmt.Sprintf("the session is %s with run %s in progress", s.machine.Current(), s.run.id))
}

// restart aborts the run in progress (kill_tools killable) and starts a
// run with text once it has stopped: at once, or, while immune tools
// finish, from the prompt queue where text waits meanwhile. With rollback
// the aborted run's messages leave the working history first.
func (s *session) restart(ctx actor.Context, in input, rollback bool) {
	if !s.promptHook(ctx, in.text) {
		return
	}
	r := s.run
	s.markAborted(abortReason, events.EndAborted, time.Now())
	r.ctl.rollback = r.ctl.rollback || rollback
	r.ctl.next = &in
	s.stopNow(&eventsv1.Abort{}, events.EndAborted)
	if s.run != r {
		s.reply(ctx, promptReply(false))
		return
	}
	r.ctl.next, r.ctl.restart = nil, true
	s.touch()
	s.enqueue(in)
	s.reply(ctx, promptReply(true))
}

// waitingAbort is an abort that waits for a safe point of the run.
type waitingAbort struct {
	at        events.At
	killTools events.KillTools
	timers    []*time.Timer
}

// abortDue says a waiting abort's timeout_ms is over.
type abortDue struct{ run uint64 }

// rank orders the points an abort stops at: a later, stronger one wins.
func rank(at events.At) int {
	switch at {
	case events.AtAfterTools:
		return 1
	case events.AtAfterResponse:
		return 2
	}
	return 3
}

// abortAt is the user's abort in any state. agent_abort goes out at once;
// the run stops now or, with at, at the safe point it names: after the
// response in flight (whose tool calls then do not run) or after the
// running tool batch. Where that point is already past — after_response
// while tools run, anything while a run is paused for a person or waits
// at its turn gap for a compaction — the abort acts now. A stronger abort
// upgrades one that waits. An abort that acts now, or comes with no run,
// cancels a compaction under way (cancelCompaction).
func (s *session) abortAt(ctx actor.Context, m *eventsv1.Abort, received time.Time) {
	r := s.run
	if r == nil {
		s.cancelCompaction()
		s.abortIdle(ctx, m, received)
		return
	}
	at := events.At(m.At)
	st := s.machine.Current()
	if at == "" || st == fsm.Idle || r.awaitCompact || (at == events.AtAfterResponse && st == fsm.ExecutingTools) {
		at = events.AtNow
	}
	if w := r.ctl.waiting; w != nil && rank(w.at) >= rank(at) {
		at = w.at // a weaker abort leaves the stronger one waiting
	}
	s.markAborted(abortReason, events.EndAborted, received)
	r.ctl.rollback = r.ctl.rollback || m.Rollback
	s.replyAtOnce(ctx, &eventsv1.Reply{})
	if at == events.AtNow {
		s.cancelCompaction()
		s.stopNow(m, events.EndAborted)
		return
	}
	s.clearQueues(m)
	if r.ctl.waiting == nil {
		r.ctl.waiting = &waitingAbort{}
	}
	r.ctl.waiting.at, r.ctl.waiting.killTools = at, events.KillTools(m.KillTools)
	if m.TimeoutMs > 0 {
		home, n := s.home, r.n
		r.ctl.waiting.timers = append(r.ctl.waiting.timers, time.AfterFunc(msDuration(m.TimeoutMs), func() {
			home.post(&abortDue{run: n})
		}))
	}
}

// msDuration is ms milliseconds of a client's command as a
// time.Duration, saturated at the longest (and shortest) one a Duration
// holds (about 292 years): a wait longer than that waits that long
// instead of wrapping around to one that is over at once.
func msDuration(ms int64) time.Duration {
	switch {
	case ms > math.MaxInt64/int64(time.Millisecond):
		return math.MaxInt64
	case ms < math.MinInt64/int64(time.Millisecond):
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// stopNow stops the run as an abort at now does, dropping any abort that
// waited.
func (s *session) stopNow(m *eventsv1.Abort, end events.EndReason) {
	s.run.stopWaiting()
	s.stop(m, end)
}

// abortTimedOut makes a waiting abort whose timeout is over act now, with
// its kill_tools.
func (s *session) abortTimedOut(m *abortDue) {
	r := s.run
	if r == nil || r.n != m.run || r.ctl.waiting == nil {
		return
	}
	s.stopNow(&eventsv1.Abort{KillTools: string(r.ctl.waiting.killTools)}, events.EndAborted)
}

// stopWaiting forgets the waiting abort and stops its timers.
func (r *run) stopWaiting() {
	if r.ctl.waiting == nil {
		return
	}
	for _, t := range r.ctl.waiting.timers {
		t.Stop()
	}
	r.ctl.waiting = nil
}

// abortAfterResponse ends the run once a response is committed, when an
// abort waits for that point: its tool calls are answered as interrupted
// by the abort and never run. It reports whether it did.
func (s *session) abortAfterResponse(msg *llm.Message) bool {
	if w := s.run.ctl.waiting; w == nil || w.at != events.AtAfterResponse {
		return false
	}
	s.run.stopWaiting()
	for _, tc := range msg.ToolCalls {
		s.commit(llm.ToolResultMessage(tc.Id, tools.InterruptedByAbort, true))
	}
	s.endTurn()
	s.finishRun(fsm.Abort, events.EndAborted)
	return true
}

// endControl is what a run that has stopped leaves to do before its end
// is told: forget a waiting abort, and take its messages out of the
// working history when it was rolled back.
func (s *session) endControl(r *run) {
	r.stopWaiting()
	if r.ctl.rollback {
		s.rollBack(&r.ctl)
	}
}

// afterRun starts the run an interrupting prompt asked for, once the
// run it interrupted has ended.
func (s *session) afterRun(r *run) {
	switch {
	case r.ctl.next != nil:
		s.startRun(*r.ctl.next)
	case r.ctl.restart && len(s.q.Prompts()) > 0:
		text, images := s.q.PopLast()
		s.startRun(input{text: text, images: images})
	}
}

// control is what conversation control keeps about a run.
type control struct {
	// from is where the run's messages start in the working history:
	// what a rollback takes out. start is where they started before the
	// first compaction that reached back into them (nil: none did).
	from  int
	start *history.Point
	// rollback takes the run's messages out once it has stopped.
	rollback bool
	// waiting is an abort that waits for a safe point; nil when none.
	waiting *waitingAbort
	// next is the prompt to start a run with once this one has stopped;
	// restart, the same for a prompt that waits in the queue (the last).
	next    *input
	restart bool
}

// nextQueued takes what a queued prompt gives the next turn: the first
// queued prompt, or, with queue_mode all, every one joined in order.
func (s *session) nextQueued() *llm.Message {
	if s.spec.Stored.QueueMode == events.QueueAll {
		return s.queued(input{})[0]
	}
	return llm.UserMessageWith(s.q.PopFirst())
}

// queued takes the queued prompts for the model, followed by in when it
// has text or images: each its own user message, or, with queue_mode all,
// one message joining them in order (and holding all their images).
func (s *session) queued(in input) []*llm.Message {
	msgs := s.q.TakePrompts()
	if in.text != "" || len(in.images) > 0 {
		msgs = append(msgs, llm.UserMessageWith(in.text, in.images))
	}
	if len(msgs) == 0 || s.spec.Stored.QueueMode != events.QueueAll {
		return msgs
	}
	texts := make([]string, len(msgs))
	var images []*llm.Image
	for i, m := range msgs {
		texts[i], images = m.Content, append(images, m.Images...)
	}
	return []*llm.Message{llm.UserMessageWith(strings.Join(texts, QueueJoin), images)}
}

// input is what a prompt or a steering message brings: its text and
// images.
type input struct {
	text   string
	images []*llm.Image
}

// userInput is a Prompt or a Steer.
type userInput interface {
	GetText() string
	GetImages() []*eventsv1.Image
}

// inputOf is the input of a Prompt or a Steer.
func inputOf(m userInput) input {
	return input{text: m.GetText(), images: m.GetImages()}
}

// enqueue queues a prompt with its images and tells prompt_queued.
func (s *session) enqueue(in input) {
	pos := s.q.AddPrompt(in.text, in.images)
	s.emit(&eventsv1.PromptQueued{Text: in.text, Position: int32(pos)})
}
