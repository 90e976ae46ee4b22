package tack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/hosting"
	"github.com/tack-run/tack/placement"
)

// local reaches sessions whose actors run in this process.
type local struct {
	rt *Runtime
	// passivates is set when sessions may be passivated: handles then
	// hold no PID (see Session.pid) and commands go by id.
	passivates bool
}

// create makes the session id (generated when empty) of the spec that
// specOf resolves, with cfg's tools. The registry claims the id, its
// owner included, in one step: only when it has said yes does anything
// else here learn of the session.
func (l *local) create(ctx context.Context, id string, cfg SessionConfig, specOf func(id string) (actors.Spec, error)) (*Session, error) {
	rt := l.rt
	release, err := rt.admitSession(cfg.User)
	if err != nil {
		return nil, err
	}
	defer release()
	generate := id == ""
	for try := 1; ; try++ {
		if generate {
			id = rt.newID()
		}
		spec, err := specOf(id)
		if err != nil {
			return nil, err
		}
		pid, err := rt.registry.Create(ctx, spec)
		if generate && try < generatedTries && errors.Is(err, placement.ErrSessionExists) {
			continue
		}
		if err != nil {
			return nil, registryError(id, err)
		}
		// The id is the new session's now. A workspace left under it — by
		// a session closed in a runtime with no store, or made before a
		// restart that forgot it — holds another session's files, perhaps
		// another user's: the new session starts without them.
		if err := rt.workspaces.Remove(id); err != nil {
			_ = rt.registry.Delete(ctx, id, placement.DeleteOptions{})
			return nil, &Error{Code: events.CodeInternal, Message: fmt.Sprintf("session %s: removing the workspace an earlier session left under its id: %v", id, err)}
		}
		rt.noteGroups(id, cfg.Tools)
		return l.handle(id, pid), nil
	}
}

// Session returns the session with id, restoring it from the store when
// it is stored but not loaded: whatever is done with a stored session
// first, it sees the session as it is once restored. A runtime whose
// sessions live elsewhere returns a handle at once; the session's
// process tells on the first command whether it exists.
func (rt *Runtime) Session(id string) (*Session, error) { return rt.reach.session(id) }

// session restores session id here if it is stored but not loaded.
func (l *local) session(id string) (*Session, error) {
	pid, err := l.rt.registry.Get(context.Background(), id)
	if err != nil {
		return nil, registryError(id, err)
	}
	return l.handle(id, pid), nil
}

// handle returns the handle of session id, whose actor is pid.
func (l *local) handle(id string, pid *actor.PID) *Session {
	if l.passivates {
		pid = nil // see Session.pid
	}
	return &Session{id: id, pid: pid, rt: l.rt}
}

func init() {
	hosting.Register(func(rt any) hosting.Host { return host{rt.(*Runtime)} })
}

// host is what a runtime lends server/remote (package internal/hosting)
// beyond its public API.
type host struct{ rt *Runtime }

// System is the actor system the sessions run in.
func (h host) System() *actor.ActorSystem { return h.rt.system }

// Deliver hands msg to session id by id, through the registry.
func (h host) Deliver(id string, msg any) { h.rt.registry.Deliver(id, msg) }

// Subscribe delivers the subscription of the actor pid, for user.
func (h host) Subscribe(id, user string, sender, pid *actor.PID, since uint64, f events.Filter) {
	h.Deliver(id, envelope(ForUser(context.Background(), user), &actors.SubscribePID{PID: pid, Since: since, Filter: f}, sender))
}

// Unsubscribe delivers the end of the subscription of the actor pid.
func (h host) Unsubscribe(id string, sender, pid *actor.PID) {
	h.Deliver(id, &actor.MessageEnvelope{Sender: sender, Message: &actors.UnsubscribePID{PID: pid}})
}

// failure is the ErrorInfo of a request the registry could not hand to
// session id.
func failure(id string, err error) *eventsv1.ErrorInfo {
	var e *Error
	errors.As(registryError(id, err), &e)
	return &eventsv1.ErrorInfo{Code: e.Code, Message: e.Message}
}

// request sends a command to a session actor and waits for its reply.
func (rt *Runtime) request(ctx context.Context, pid *actor.PID, msg any) (*eventsv1.Reply, error) {
	c := rt.replies.Open()
	rt.system.Root.Send(pid, &actor.MessageEnvelope{Message: msg, Sender: c.Sender})
	return rt.answer(c.Wait(rt.timeoutFor(ctx)))
}

// timeoutFor is how long a request made under ctx waits for its session's
// answer: what is left of ctx's deadline, else the runtime's request
// timeout. A deadline already past leaves a nanosecond: a negative
// duration would make protoactor's future wait with no timeout at all,
// forever if the answer never comes (a reply held for a write to a store
// that hangs).
func (rt *Runtime) timeoutFor(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Nanosecond)
	}
	return rt.timeout
}

// answer is the Reply of a request, or the error it carries.
func (rt *Runtime) answer(res any, err error) (*eventsv1.Reply, error) {
	if errors.Is(err, actor.ErrDeadLetter) {
		return nil, &Error{Code: events.CodeNotAlive, Message: "the session stopped before it read the command"}
	}
	if err != nil {
		return nil, &Error{Code: events.CodeNotAlive, Message: fmt.Sprintf("session did not answer: %v", err)}
	}
	reply, ok := res.(*eventsv1.Reply)
	if !ok {
		return nil, &Error{Code: events.CodeInternal, Message: fmt.Sprintf("unexpected reply %T", res)}
	}
	return reply, errorFrom(reply.Error)
}
