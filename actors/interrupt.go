package actors

import (
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/tools"
)

// abortReason is the reason agent_abort carries for a user's abort.
const abortReason = "user"

// queuePrompt queues a prompt while busy; it is consumed when the run would
// otherwise end.
func (s *session) queuePrompt(ctx actor.Context, in input) {
	if !s.promptHook(ctx, in.text) {
		return
	}
	if n := len(s.q.Prompts()); n >= s.home.env.promptLimit() {
		s.fail(ctx, events.CodeQueueFull, fmt.Sprintf("prompt queue holds %d prompts", n))
		return
	}
	s.touch()
	s.enqueue(in)
	s.reply(ctx, promptReply(true))
}

// queueSteer queues steering for the next request; with interruptTools it
// also cancels the killable tools of the running batch at once.
func (s *session) queueSteer(ctx actor.Context, in input, interruptTools bool) {
	text := in.text
	if !s.steerHook(ctx, s.notes.ids.Steers+1, text) {
		return
	}
	ref := s.nextSteerRef()
	if limit := s.home.env.steeringLimit(); len(s.q.Steering()) >= limit {
		s.emit(&eventsv1.SteeringReceived{Ref: ref, Text: text, Status: string(events.SteeringRejectedFull)})
		s.fail(ctx, events.CodeQueueFull, fmt.Sprintf("steering queue holds %d messages", limit))
		return
	}
	s.touch()
	s.q.AddSteering(&eventsv1.SteeringItem{Ref: ref, Text: text}, in.images)
	s.emit(&eventsv1.SteeringReceived{Ref: ref, Text: text, Status: string(events.SteeringAccepted)})
	if _, prompt := ctx.Message().(*eventsv1.Prompt); prompt { // if_busy steer
		s.reply(ctx, promptReply(true))
	} else {
		s.reply(ctx, steerReply(ref))
	}
	if interruptTools && !s.run.aborted {
		s.skipForSteering()
	}
}

// skipForSteering cancels the running killable tools of the batch; immune
// tools finish and their real results are committed.
func (s *session) skipForSteering() {
	for _, c := range s.run.batch.calls {
		if c.running() && !c.immune {
			s.emit(&eventsv1.ToolSkippedForSteering{Name: c.tc.Name, CallId: c.tc.Id})
			s.interrupt(c, tools.SkippedForSteering)
		}
	}
	s.batchProgress()
}

// abortIdle: nothing runs, but the abort is still reported. (A run paused
// for a person's answer is aborted by abortAt: its pending approvals and
// questions are resolved as rejected.)
func (s *session) abortIdle(ctx actor.Context, m *eventsv1.Abort, received time.Time) {
	s.tellAbort(&eventsv1.AgentAbort{Reason: abortReason}, received)
	s.clearQueues(m)
	s.reply(ctx, &eventsv1.Reply{})
}

// markAborted reports an abort (agent_abort, with why) and makes the run
// end with reason end at its next boundary; since is when the abort was
// received or decided.
func (s *session) markAborted(why string, end events.EndReason, since time.Time) {
	s.tellAbort(&eventsv1.AgentAbort{RunId: &s.run.id, Reason: why}, since)
	s.run.aborted, s.run.end = true, end
}

// tellAbort publishes agent_abort, which the write gate never holds, and
// reports how long after since it went out. Then the session yields its
// goroutine before it cleans up: the subscribers it just woke run first,
// and in a burst of aborts (a thousand sessions stopped at once) every
// other session tells its abort before any one settles tools, commits and
// ends its run, so no abort waits behind another's cleanup
// (docs/benchmarks.md, abort delivery).
func (s *session) tellAbort(ev *eventsv1.AgentAbort, since time.Time) {
	if s.out.trace != nil {
		s.out.trace.Abort(since)
	}
	s.emit(ev)
	s.home.env.observer().AbortTold(time.Since(since))
	s.out.wake()
	runtime.Gosched()
}

// stop ends an aborted run from wherever it is: a model request in flight
// is cancelled and its partial text committed; a tool batch has the tools
// kill_tools names settled as interrupted and held calls rejected, and
// ends once no tool is left running; between turns the run ends at once.
func (s *session) stop(m *eventsv1.Abort, end events.EndReason) {
	switch {
	case s.run.batch != nil:
		s.run.killTools = events.KillTools(m.KillTools)
		s.clearQueues(m)
		for _, c := range s.run.batch.calls {
			switch {
			case c.running() && kills(events.KillTools(m.KillTools), c.immune):
				s.emit(&eventsv1.ToolKilled{Name: c.tc.Name, CallId: c.tc.Id, Reason: string(events.EndAborted)})
				s.interrupt(c, tools.InterruptedByAbort)
			case c.running() && c.sub != nil:
				c.sub.halt() // kill_tools none: the child stops after its own tools
			case c.held():
				s.resolveHold(c, events.ApprovalRejected, tools.RejectedPrefix+string(events.EndAborted))
			}
		}
		s.batchProgress()
	case s.run.stream != nil:
		s.run.cancel()
		s.commitPartial()
		s.endTurn()
		s.clearQueues(m)
		s.finishRun(fsm.Abort, end)
	default:
		s.clearQueues(m)
		s.finishRun(fsm.Abort, end)
	}
}

// kills reports whether an abort with killTools cancels a tool.
func kills(killTools events.KillTools, immune bool) bool {
	switch killTools {
	case events.KillAll:
		return true
	case events.KillNone:
		return false
	default:
		return !immune
	}
}

// clearQueues drops queued prompts and steering when the abort asks to.
func (s *session) clearQueues(m *eventsv1.Abort) {
	if !m.ClearQueue || s.q.Empty() {
		return
	}
	s.touch()
	prompts, steering := s.q.Clear()
	for _, p := range prompts {
		s.emit(&eventsv1.PromptDropped{Text: p})
	}
	for _, st := range steering {
		s.emit(&eventsv1.SteeringDropped{Ref: st.Ref, Text: st.Text})
	}
}

// promptIdle starts a run with a prompt, unless a plugin refuses it; with
// rollback, a paused run it supersedes is rolled back.
func (s *session) promptIdle(ctx actor.Context, in input, rollback bool) {
	if !s.admitRun(ctx) {
		return
	}
	if !s.promptHook(ctx, in.text) {
		s.unadmit()
		return
	}
	if rollback {
		s.run.ctl.rollback = true
	}
	s.supersede()
	s.startRun(in)
	s.reply(ctx, promptReply(false))
}

// steerIdle: steering while idle behaves as a prompt.
func (s *session) steerIdle(ctx actor.Context, in input) {
	text := in.text
	if !s.admitRun(ctx) {
		return
	}
	if !s.steerHook(ctx, s.notes.ids.Steers+1, text) || !s.promptHook(ctx, text) {
		s.unadmit()
		return
	}
	ref := s.nextSteerRef()
	s.supersede()
	s.startRun(in)
	s.reply(ctx, steerReply(ref))
}

// promptHook asks before_prompt; a plugin that aborts or skips refuses
// the prompt (prompt_rejected, reply rejected).
func (s *session) promptHook(ctx actor.Context, text string) bool {
	d := s.hook(&plugins.Event{Hook: plugins.BeforePrompt, Text: text}).Stop
	if d == nil {
		return true
	}
	reason := fmt.Sprintf("plugin %s: %s", d.Plugin, orAborted(d.Action.Reason))
	s.emit(&eventsv1.PromptRejected{Text: text, Reason: reason})
	s.fail(ctx, events.CodeRejected, reason)
	return false
}

// steerHook asks before_steering; a plugin may reject the message
// (steering_received rejected_plugin, reply rejected).
func (s *session) steerHook(ctx actor.Context, n uint64, text string) bool {
	d := s.hook(&plugins.Event{Hook: plugins.BeforeSteering, Text: text}).Stop
	if d == nil {
		return true
	}
	reason := fmt.Sprintf("plugin %s: %s", d.Plugin, d.Action.Reason)
	s.emit(&eventsv1.SteeringReceived{Ref: s.steerRef(n), Text: text, Status: string(events.SteeringRejectedPlugin)})
	s.fail(ctx, events.CodeRejected, reason)
	return false
}

func (s *session) nextSteerRef() string { return s.steerRef(s.notes.ids.Steers + 1) }

// steerRef spends steering ref n. The counter is stored before the ref
// is told (steering_received, accepted or rejected), so a restart never
// hands it out again.
func (s *session) steerRef(n uint64) string {
	s.notes.ids.Steers = n
	s.touch()
	return "st-" + strconv.FormatUint(n, 10)
}
