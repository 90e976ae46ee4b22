package tack

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// remote reaches sessions that other processes host.
type remote struct {
	rt *Runtime
	e  Elsewhere
}

// Elsewhere is where the sessions of a runtime made with WithSessionsElsewhere
// live: in other processes (a cluster's members, package
// cluster/front). Such a runtime hosts no session: Spawn creates
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
	// user, when not "", is who follows: the session refuses a user it
	// does not belong to (invalid_session), as its commands do.
	Follow(id, user string, since uint64, types []string, handle func(*eventsv1.Event)) (stop func(), err error)
}

// WithSessionsElsewhere makes a runtime that hosts no session: every session
// lives where e puts it (see Elsewhere), and the runtime is a front end
// for them, such as `tack serve --cluster`. It needs the store those
// sessions are kept in (WithStore), read for owners and lists.
func WithSessionsElsewhere(e Elsewhere) Option { return func(c *Config) { c.Elsewhere = e } }

// send is Session.Send for a session that lives elsewhere: only events/v1
// commands travel.
func (r remote) send(ctx context.Context, s *Session, cmd any) (*eventsv1.Reply, error) {
	return r.request(ctx, s.id, cmd)
}

// request sends cmd to session id wherever it lives.
func (r remote) request(ctx context.Context, id string, cmd any) (*eventsv1.Reply, error) {
	msg, ok := cmd.(proto.Message)
	if !ok {
		return nil, &Error{Code: events.CodeInternal, Message: fmt.Sprintf("%T cannot be sent to a session in another process", cmd)}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.rt.timeout)
		defer cancel()
	}
	reply, err := r.e.Request(ctx, id, msg)
	if err != nil {
		return nil, err
	}
	return reply, errorFrom(reply.Error)
}

// spawn is Spawn for a runtime whose sessions live elsewhere: the names
// are checked here, where the policy is; the session's process resolves
// them.
func (r remote) spawn(cfg SessionConfig) (*Session, error) {
	if err := r.rt.permitElsewhere(cfg); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.rt.timeout)
	defer cancel()
	id, err := r.e.Create(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Session{id: id, rt: r.rt}, nil
}

// session returns a handle at once: the session's process tells on the
// first command whether it exists.
func (r remote) session(id string) (*Session, error) { return &Session{id: id, rt: r.rt}, nil }

// switchModel leaves the name to the session's process to resolve; Send
// checks the policy.
func (remote) switchModel(ctx context.Context, s *Session, name string) error {
	_, err := s.Send(ctx, &eventsv1.SwitchModel{Model: name})
	return err
}

// subscribe is Session.Subscribe for a session that lives elsewhere: the
// events Follow brings go into ch.
func (r remote) subscribe(ctx context.Context, s *Session, ch *events.Channel, _ events.Filter, opt SubscribeOptions) (*Subscription, error) {
	stop, err := r.e.Follow(s.id, UserOf(ctx), opt.Since, opt.Types, ch.Deliver)
	if err != nil {
		return nil, err
	}
	return &Subscription{C: ch.C(), stop: func() error {
		stop()
		ch.Close() // Follow calls Deliver no more
		return nil
	}}, nil
}

// read is Session.Read for a session that lives elsewhere: its events
// come over the network into a Subscription of this process's own, which
// the Reader reads.
func (r remote) read(ctx context.Context, s *Session, f events.Filter, opt SubscribeOptions) (*Reader, error) {
	sub, err := r.subscribe(ctx, s, events.NewChannel(opt.Buffer), f, opt)
	if err != nil {
		return nil, err
	}
	return &Reader{sub: sub}, nil
}

// subscribePID cannot be: a PID subscribes where the session lives.
func (remote) subscribePID(context.Context, *Session, *actor.PID, uint64, events.Filter) error {
	return &Error{Code: events.CodeBadRequest, Message: "SubscribePID: the session lives in another process; use Subscribe"}
}

// fork asks the session's process to make the fork.
func (remote) fork(ctx context.Context, s *Session, index int, newID string) (*Session, error) {
	r, err := s.Send(ctx, &eventsv1.Fork{Index: int32(index), NewSession: newID})
	if err != nil {
		return nil, err
	}
	return &Session{id: r.GetCreated().GetSession(), rt: s.rt}, nil
}

// export asks the session's process for the document.
func (remote) export(ctx context.Context, s *Session) (*eventsv1.SessionExport, error) {
	r, err := s.Send(ctx, &eventsv1.ExportSession{})
	return r.GetExport(), err
}

// delete asks the session's process to delete it.
func (r remote) delete(ctx context.Context, id string) error {
	_, err := r.request(ctx, id, &eventsv1.DeleteSession{})
	if err == nil {
		r.rt.deletions.tell(id)
	}
	return err
}

// close asks the session's process to stop it.
func (r remote) close(ctx context.Context, id string) error {
	_, err := r.request(ctx, id, &eventsv1.CloseSession{})
	return err
}

// sweep deletes nothing: the processes that host the sessions sweep them.
func (remote) sweep(context.Context, time.Duration) ([]string, error) { return nil, nil }
