package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// UserHeader is the message header naming the user a command is sent
// for (tack.ForUser). A session takes such a command only if it belongs
// to that user: a server checks a request's owner and then sends its
// command by id, and the id may have changed hands in between — deleted
// by one user and taken at once by another.
const UserHeader = "tack-user"

// foreign reports whether ctx's message was sent for a user the session
// does not belong to, and answers it invalid_session, as a session that
// does not exist is answered.
func (s *session) foreign(ctx actor.Context) bool {
	h := ctx.MessageHeader() // nil for a message sent without an envelope
	if h == nil {
		return false
	}
	if u := h.Get(UserHeader); u == "" || u == s.spec.Stored.User {
		return false
	}
	if ctx.Sender() != nil {
		ctx.Respond(&eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: events.CodeInvalidSession,
			Message: fmt.Sprintf("no session %q", s.spec.ID)}})
	}
	return true
}
