package tack

import (
	"context"
	"fmt"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Fork makes a new session, named newID (generated when empty), with this
// session's configuration — model, system prompt, tools, plugins, context
// options, queue mode and user — and the first index messages of its
// working history, moved back to a turn boundary so that the history is
// valid for a provider. The new session's first events are
// session_created and session_forked (from_session, and the index
// actually used). It works whatever this session is doing: the fork sees
// the committed history only. An index below 0 or beyond the history is
// bad_request.
func (s *Session) Fork(ctx context.Context, index int, newID string) (*Session, error) {
	rt := s.rt
	if newID != "" {
		if err := checkID("new_session", newID); err != nil {
			return nil, err
		}
	}
	if rt.elsewhere != nil { // the session's process makes the fork
		r, err := s.Send(ctx, &eventsv1.Fork{Index: int32(index), NewSession: newID})
		if err != nil {
			return nil, err
		}
		return &Session{id: r.GetCreated().GetSession(), rt: rt}, nil
	}
	timeout := rt.timeoutFor(ctx)
	from, err := s.actorPID(ctx)
	if err != nil {
		return nil, err
	}
	res, err := rt.system.Root.RequestFuture(from, &actors.ForkPoint{Index: index}, timeout).Result()
	if err != nil {
		return nil, &Error{Code: events.CodeNotAlive, Message: fmt.Sprintf("session did not answer: %v", err)}
	}
	var src *actors.ForkSource
	switch r := res.(type) {
	case *actors.ForkSource:
		src = r
	case *eventsv1.Reply:
		return nil, errorFrom(r.Error)
	default:
		return nil, &Error{Code: events.CodeInternal, Message: fmt.Sprintf("unexpected reply %T", res)}
	}
	cfg, err := sessionConfig(newID, src.Config)
	if err != nil {
		return nil, err
	}
	return rt.create(ctx, newID, cfg, func(id string) (actors.Spec, error) {
		spec, err := rt.spec(id, cfg, drop)
		spec.Stored, spec.Fork = src.Config, &src.Fork
		return spec, err
	})
}
