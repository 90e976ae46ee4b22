package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// emit publishes one event (once the store holds what it tells).
func (s *session) emit(payload proto.Message) {
	s.publish(events.New(payload))
}

// reply answers the sender of a request (once the store holds what the
// command changed); plain sends get no answer.
func (s *session) reply(ctx actor.Context, r *eventsv1.Reply) {
	if ctx.Sender() != nil {
		s.deliver(ctx, r)
	}
}

// replyAtOnce answers a request without waiting for any write: the answer
// to an abort of a run, which like agent_abort must not wait behind a slow
// or failing store (what it stopped stays stopped whatever the store does).
func (s *session) replyAtOnce(ctx actor.Context, r *eventsv1.Reply) {
	if ctx.Sender() != nil {
		ctx.Respond(r)
	}
}

// fail answers a request with an error.
func (s *session) fail(ctx actor.Context, code, message string) {
	s.reply(ctx, &eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: code, Message: message}})
}

func promptReply(queued bool) *eventsv1.Reply {
	return &eventsv1.Reply{Data: &eventsv1.Reply_Prompt{Prompt: &eventsv1.PromptReply{Queued: queued}}}
}

func steerReply(ref string) *eventsv1.Reply {
	return &eventsv1.Reply{Data: &eventsv1.Reply_Steer{Steer: &eventsv1.SteerReply{Ref: ref}}}
}
