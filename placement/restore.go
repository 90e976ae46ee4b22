package placement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/workers"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/store"
)

// settleTimeout bounds the wait for a restored session's first write; it
// is longer than a session's own retries of a failed write.
const settleTimeout = 15 * time.Second

// restoring is a restore (or a passivation) under way; those who ask
// meanwhile wait for it, and what Deliver is given meanwhile waits in
// queue, in order.
type restoring struct {
	done  chan struct{}
	pid   *actor.PID
	user  string // the session's user, registered with pid
	err   error
	queue []any
	// passivating marks a passivation: once done, waiters look again.
	passivating bool
	// waiters counts the Get calls waiting on a passivation, which then
	// restores at once.
	waiters int
	// released: Release was called meanwhile, and nobody asked for the
	// session since; once restored it is handed over at once.
	released bool
	// making marks the stand-in of a session Create makes (making).
	making bool
	// leaving is the actor of a session passivating (Leave), which
	// answers until it has parked or stored itself and stopped (Actors).
	leaving *actor.PID
}

// Get returns the actor of session id. A stored session that is not
// loaded is restored first — lease, record and history, then an actor that
// takes it up — so every use of a session, reads included, sees it as it
// is once restored. Concurrent first uses share one restore; a use that
// meets a passivation waits for it and restores the session. It fails
// with ErrNoSession for an unknown id, and with store.ErrOwned when another
// node holds the session.
func (r *Registry) Get(ctx context.Context, id string) (*actor.PID, error) {
	for {
		r.mu.Lock()
		if pid, ok := r.pids[id]; ok {
			r.mu.Unlock()
			return pid, nil
		}
		if r.env.Unloaded() == nil || r.respec == nil || r.deletingLocked(id) {
			r.mu.Unlock()
			return nil, fmt.Errorf("%w: %q", ErrNoSession, id)
		}
		c, ok := r.restoring[id]
		if !ok {
			c = r.beginLocked(id)
		}
		c.released = false // wanted here again
		if c.passivating {
			c.waiters++
		}
		r.mu.Unlock()
		select {
		case <-c.done:
			if c.passivating {
				continue // stopped: look again (and restore)
			}
			return c.pid, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Deliver hands msg — a command, or an *actor.MessageEnvelope that names
// its sender — to session id: at once when it is loaded, else once a
// restore (which Deliver starts for a stored session) or a passivation
// under way is over, in the order Deliver was called. A request that
// cannot reach its session is answered with a Reply carrying the Failure.
// Deliver never blocks on the store: it is what remote callers and
// handles that outlive a passivation send through.
func (r *Registry) Deliver(id string, msg any) {
	r.mu.RLock()
	if pid, ok := r.pids[id]; ok {
		// Under the lock, so that a passivation (which takes the session
		// out of pids under the whole lock) never misses a message sent
		// before.
		r.system.Root.Send(pid, msg)
		r.mu.RUnlock()
		return
	}
	r.mu.RUnlock()
	r.deliverUnloaded(id, msg)
}

// Post hands msg to session id if it is loaded, or queues it behind a
// restore under way, or behind a passivation under way that has
// commands waiting already (they wake the session, msg after them); a
// session that is none of these — parked, stored, gone, or passivating
// with nothing waiting — is not woken for msg, which is dropped. It is
// for news a session may miss when it has nothing to undo: a subscriber
// gone.
func (r *Registry) Post(id string, msg any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sendLoadedLocked(id, msg) {
		return
	}
	if c, ok := r.restoring[id]; ok && (!c.passivating || len(c.queue) > 0) {
		c.queue = append(c.queue, msg)
	}
}

// sendLoadedLocked sends msg to session id if it is loaded, and reports
// whether it was.
func (r *Registry) sendLoadedLocked(id string, msg any) bool {
	pid, ok := r.pids[id]
	if ok {
		r.system.Root.Send(pid, msg)
	}
	return ok
}

// deliverUnloaded is Deliver to a session that was not loaded as Deliver
// looked: under the whole lock, it is sent if the session was loaded
// meanwhile, else queued for the restore or passivation under way, or
// for a restore it starts.
func (r *Registry) deliverUnloaded(id string, msg any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sendLoadedLocked(id, msg) {
		return
	}
	c, ok := r.restoring[id]
	if !ok {
		if r.env.Unloaded() == nil || r.respec == nil || r.deletingLocked(id) {
			r.refuse(id, msg, fmt.Errorf("%w: %q", ErrNoSession, id))
			return
		}
		c = r.beginLocked(id)
	}
	c.released = false // wanted here again
	c.queue = append(c.queue, msg)
}

// beginLocked starts the restore of session id on a goroutine of its own:
// the restore is shared, and one caller giving up must not fail the rest.
// It is a worker's (internal/workers), whose stack has grown already: a
// restore runs deep (the store, the spec, the tools' schemas), and on a
// new goroutine copied its stack several times, a sixth of a wake-up.
func (r *Registry) beginLocked(id string) *restoring {
	c := &restoring{done: make(chan struct{})}
	r.restoring[id] = c
	workers.Go(func() { r.finishRestore(id, c) })
	return c
}

// finishRestore restores session id for c and hands it what waited.
func (r *Registry) finishRestore(id string, c *restoring) {
	pid, err := r.restore(context.Background(), id, c)
	r.mu.Lock()
	c.pid, c.err = pid, err
	handover := r.settleQueueLocked(id, c)
	r.mu.Unlock()
	r.handOver(id, handover)
}

// settleQueueLocked ends the restore or passivation c: the session (when
// c.pid is set) is registered and given what waited, in order, after the
// subscriptions a passivation kept for it; else each waiting request is
// answered with c.err. A session Release asked for meanwhile is not
// registered: what waited is answered with ErrReleased, and its actor is
// returned, for the caller to hand over (handOver) once r.mu is unlocked.
func (r *Registry) settleQueueLocked(id string, c *restoring) (handover *actor.PID) {
	if c.pid != nil && c.released {
		handover = c.pid
		c.pid, c.err = nil, fmt.Errorf("%w: %q", ErrReleased, id)
	}
	if c.pid != nil {
		r.registerLocked(id, c.pid, c.user)
		if r.env.Store == nil && r.env.Park != nil {
			// The actor is the session now: its record goes in the same
			// step, so that whoever looks finds one or the other (Owner).
			r.env.Park.Remove(id)
		}
		if d := r.dormant[id]; d != nil {
			delete(r.dormant, id)
			for _, sub := range d.subs {
				r.system.Root.Send(c.pid, sub)
			}
		}
		for _, m := range c.queue {
			r.system.Root.Send(c.pid, m)
		}
	} else {
		for _, m := range c.queue {
			r.refuse(id, m, c.err)
		}
	}
	c.queue = nil
	delete(r.restoring, id)
	close(c.done)
	return handover
}

// handOver stops the actor of session id, which Release asked for while
// it was restored, and gives its lease up, as Release does for a loaded
// session. pid nil does nothing.
func (r *Registry) handOver(id string, pid *actor.PID) {
	if pid == nil {
		return
	}
	_ = r.settle(pid)
	r.halt(pid)
	r.mu.Lock()
	delete(r.dormant, id)
	r.mu.Unlock()
	r.release(id)
}

// refuse answers a request that cannot reach session id; one that
// waited for a session handed over meanwhile (ErrReleased) is answered
// with a dead letter, protoactor's word for "not delivered": its sender
// may try again where the session now is.
func (r *Registry) refuse(id string, msg any, err error) {
	env, ok := msg.(*actor.MessageEnvelope)
	if !ok || env.Sender == nil {
		return
	}
	if errors.Is(err, ErrReleased) {
		r.system.Root.Send(env.Sender, &actor.DeadLetterResponse{Target: r.system.NewLocalPID(actors.Name(id))})
		return
	}
	var info *eventsv1.ErrorInfo
	if r.fail != nil {
		info = r.fail(id, err)
	} else if errors.Is(err, ErrNoSession) {
		info = &eventsv1.ErrorInfo{Code: events.CodeInvalidSession, Message: err.Error()}
	} else {
		info = &eventsv1.ErrorInfo{Code: events.CodeInternal, Message: err.Error()}
	}
	r.system.Root.Send(env.Sender, &eventsv1.Reply{Error: info})
}

// restore starts the actor of a stored session for c, once admitted for
// its user, and waits until what the restore found (interrupted calls,
// the end of a cut run, agent_recovered) is stored and told, so the first
// use sees it in the ring as well. On failure the lease is given up,
// unless another node holds it.
func (r *Registry) restore(ctx context.Context, id string, c *restoring) (*actor.PID, error) {
	spec, err := r.load(ctx, id)
	if err == nil {
		err = r.claim(spec.Stored.User, c)
	}
	if err == nil {
		var pid *actor.PID
		if pid, err = actors.Spawn(r.system.Root, r.env, r, spec, actors.Name(id)); err == nil {
			if err = r.settle(pid); err == nil {
				return pid, nil // a parked one's record goes as it is registered (settleQueueLocked)
			}
			r.halt(pid)
		}
	}
	if !errors.Is(err, store.ErrOwned) && !errors.Is(err, ErrNoSession) {
		r.release(id)
	}
	return nil, err
}

// claim records the user of the session c restores, which Sessions then
// counts, once WithAdmit's admit has admitted it; a refused restore
// starts no actor, and what waited for it is answered with the refusal.
// A sub-agent is admitted like any session: a command naming it brings
// it back, and a user could otherwise have one session make children and
// then load them all.
func (r *Registry) claim(user string, c *restoring) error {
	release := func() {}
	if r.admit != nil && user != "" {
		var err error
		if release, err = r.admit(user); err != nil {
			return err
		}
	}
	defer release()
	r.mu.Lock()
	defer r.mu.Unlock()
	c.user = user
	return nil
}

// settle waits until the session has stored everything it has told.
func (r *Registry) settle(pid *actor.PID) error {
	res, err := r.ask(pid, &actors.Settle{}, r.answerWait)
	if err != nil {
		return fmt.Errorf("restoring the session: %w", err)
	}
	if e := res.(*eventsv1.Reply).GetError(); e != nil {
		return fmt.Errorf("restoring the session: %s: %s", e.Code, e.Message)
	}
	return nil
}

// load takes the lease of a stored session and reads what its actor
// needs; a parked session (Env.Park) has no lease.
func (r *Registry) load(ctx context.Context, id string) (actors.Spec, error) {
	st := r.env.Unloaded()
	var err error
	if r.env.Store != nil {
		err = r.acquire(ctx, id)
	}
	var snap *store.Snapshot
	if err == nil {
		snap, err = st.Load(ctx, id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return actors.Spec{}, fmt.Errorf("%w: %q", ErrNoSession, id)
	}
	if err != nil {
		return actors.Spec{}, err
	}
	cfg, err := spec.FromStored(id, snap.Config)
	if err != nil {
		return actors.Spec{}, err
	}
	sp, err := r.respec(id, cfg)
	if err != nil {
		return actors.Spec{}, err
	}
	sp.Restore, sp.Stored, sp.Unparked = snap, &cfg, r.env.Store == nil
	return sp, nil
}
