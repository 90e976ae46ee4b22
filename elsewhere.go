package tack

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Elsewhere is where the sessions of a runtime made with WithSessionsElsewhere
// live: in other processes (a cluster's members, package
// server/remote/front). Such a runtime hosts no session: Spawn creates
// through Create, a Session's commands go through Request and its
// subscriptions through Follow, and reads that need no session — the
// owner of a session (User), the list (List) — are answered from the
// shared store.
type Elsewhere interface {
	// Create creates the session cfg describes where it belongs, for
	// cfg.User, and returns its id (generated when cfg.ID is empty).
	// Errors are *Error with the protocol's code.
	Create(ctx context.Context, cfg SessionConfig) (string, error)
	// Request sends cmd, an events/v1 command, to session id wherever it
	// lives, and returns its Reply; a reply that carries an error is
	// returned as it is (the Session turns it into an *Error). An error is
	// an *Error (not_alive when no process answered).
	Request(ctx context.Context, id string, cmd proto.Message) (*eventsv1.Reply, error)
	// Follow calls handle with session id's events after since (types
	// filters them), in order, from one goroutine at a time, following the
	// session wherever it moves (a gap comes as events_lost). It returns
	// once the first subscription is in place; stop ends it and returns
	// once handle is no longer called.
	Follow(id string, since uint64, types []string, handle func(*eventsv1.Event)) (stop func(), err error)
}

// WithSessionsElsewhere makes a runtime that hosts no session: every session
// lives where e puts it (see Elsewhere), and the runtime is a front end
// for them, such as `tack serve --cluster`. It needs the store those
// sessions are kept in (WithStore), read for owners and lists.
func WithSessionsElsewhere(e Elsewhere) Option { return func(c *config) { c.elsewhere = e } }

// sendElsewhere is Session.Send for a session that lives elsewhere: only
// events/v1 commands travel.
func (rt *Runtime) sendElsewhere(ctx context.Context, id string, cmd any) (*eventsv1.Reply, error) {
	msg, ok := cmd.(proto.Message)
	if !ok {
		return nil, &Error{Code: events.CodeInternal, Message: fmt.Sprintf("%T cannot be sent to a session in another process", cmd)}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, rt.timeout)
		defer cancel()
	}
	r, err := rt.elsewhere.Request(ctx, id, msg)
	if err != nil {
		return nil, err
	}
	return r, errorFrom(r.Error)
}

// spawnElsewhere is Spawn for a runtime whose sessions live elsewhere.
func (rt *Runtime) spawnElsewhere(cfg SessionConfig) (*Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), rt.timeout)
	defer cancel()
	id, err := rt.elsewhere.Create(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Session{id: id, rt: rt}, nil
}

// subscribeElsewhere is Session.Subscribe for a session that lives
// elsewhere: the events Follow brings go into ch.
func (s *Session) subscribeElsewhere(ch *events.Channel, opt SubscribeOptions) (*Subscription, error) {
	stop, err := s.rt.elsewhere.Follow(s.id, opt.Since, opt.Types, ch.Deliver)
	if err != nil {
		return nil, err
	}
	return &Subscription{C: ch.C(), ch: ch, s: s, stop: func() {
		stop()
		ch.Close() // Follow calls Deliver no more
	}}, nil
}
