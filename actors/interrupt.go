package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/tools"
)

// Values of Abort.kill_tools.
const (
	KillKillable = "killable"
	KillAll      = "all"
	KillNone     = "none"
)

// abortReason is the reason agent_abort carries for a user's abort.
const abortReason = "user"

// queuePrompt queues a prompt while busy; it is consumed when the run would
// otherwise end.
func (s *session) queuePrompt(ctx actor.Context, text string) {
	if len(s.prompts) >= s.env.promptLimit() {
		s.fail(ctx, events.CodeQueueFull, fmt.Sprintf("prompt queue holds %d prompts", len(s.prompts)))
		return
	}
	s.prompts = append(s.prompts, text)
	s.emit(&eventsv1.PromptQueued{Text: text, Position: int32(len(s.prompts))})
	s.reply(ctx, promptReply(true))
}

// queueSteer queues steering for the next request; with interruptTools it
// also cancels the killable tools of the running batch at once.
func (s *session) queueSteer(ctx actor.Context, text string, interruptTools bool) {
	ref := s.nextSteerRef()
	if limit := s.env.steeringLimit(); len(s.steering) >= limit {
		s.emit(&eventsv1.SteeringReceived{Ref: ref, Text: text, Status: "rejected_full"})
		s.fail(ctx, events.CodeQueueFull, fmt.Sprintf("steering queue holds %d messages", limit))
		return
	}
	s.steering = append(s.steering, &eventsv1.SteeringItem{Ref: ref, Text: text})
	s.emit(&eventsv1.SteeringReceived{Ref: ref, Text: text, Status: "accepted"})
	s.reply(ctx, steerReply(ref))
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

// abortIdle: nothing runs, but the abort is still reported.
func (s *session) abortIdle(ctx actor.Context, m *eventsv1.Abort) {
	s.emit(&eventsv1.AgentAbort{Reason: abortReason})
	s.clearQueues(m)
	s.reply(ctx, &eventsv1.Reply{})
}

// abortStream cancels the model request and commits what was streamed.
func (s *session) abortStream(ctx actor.Context, m *eventsv1.Abort) {
	s.emit(&eventsv1.AgentAbort{RunId: &s.run.id, Reason: abortReason})
	s.reply(ctx, &eventsv1.Reply{})
	s.run.cancel()
	s.commitPartial()
	s.emit(&eventsv1.TurnEnd{RunId: s.run.id, Turn: s.run.turn})
	s.clearQueues(m)
	s.finishRun(fsm.Abort, EndAborted)
}

// abortTools kills the tools kill_tools names; the run ends once the last
// surviving tool is done, but agent_abort goes out at once.
func (s *session) abortTools(ctx actor.Context, m *eventsv1.Abort) {
	s.emit(&eventsv1.AgentAbort{RunId: &s.run.id, Reason: abortReason})
	s.reply(ctx, &eventsv1.Reply{})
	s.run.aborted = true
	s.clearQueues(m)
	for _, c := range s.run.batch.calls {
		if c.running() && kills(m.KillTools, c.immune) {
			s.emit(&eventsv1.ToolKilled{Name: c.tc.Name, CallId: c.tc.Id, Reason: "aborted"})
			s.interrupt(c, tools.InterruptedByAbort)
		}
	}
	s.batchProgress()
}

// kills reports whether an abort with killTools cancels a tool.
func kills(killTools string, immune bool) bool {
	switch killTools {
	case KillAll:
		return true
	case KillNone:
		return false
	default:
		return !immune
	}
}

// clearQueues drops queued prompts and steering when the abort asks to.
func (s *session) clearQueues(m *eventsv1.Abort) {
	if !m.ClearQueue {
		return
	}
	for _, p := range s.prompts {
		s.emit(&eventsv1.PromptDropped{Text: p})
	}
	for _, st := range s.steering {
		s.emit(&eventsv1.SteeringDropped{Ref: st.Ref, Text: st.Text})
	}
	s.prompts, s.steering = nil, nil
}
