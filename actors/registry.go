package actors

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/store"
)

// Errors of the Registry. Store errors (store.ErrOwned, store.ErrNotFound,
// store.ErrExists, faults) come wrapped as they are.
var (
	// ErrSessionExists is returned by Spawn and Create for an id in use.
	ErrSessionExists = errors.New("session exists")
	// ErrNoSession is returned by Get for an id no session has.
	ErrNoSession = errors.New("no such session")
	// ErrReleased is returned by Get when Release handed the session over
	// while it was being restored; what Deliver was given for it
	// meanwhile is answered with a dead letter (not done).
	ErrReleased = errors.New("session handed over while it was being restored")
)

// settleTimeout bounds the wait for a restored session's first write; it
// is longer than a session's own retries of a failed write.
const settleTimeout = 15 * time.Second

// Respec resolves a stored session's configuration into the Spec of its
// actor: its model, tools and plugins. The Registry calls it to restore a
// session.
type Respec func(id string, cfg store.Config) (Spec, error)

// Registry spawns, finds and closes the session actors of one actor
// system. With a store (Env.Store) it is also the one place that keeps the
// life of a stored session: Create records a session before it starts; Get
// restores a stored session on its first use, whatever that use is, once
// even when many ask at the same time; the leases of loaded sessions are
// renewed until Shutdown; Close stops a session and gives its lease up.
type Registry struct {
	system *actor.ActorSystem
	env    *Env
	respec Respec
	// child resolves sub-agents' configurations; nil: as respec.
	child Respec

	fail Failure
	// answerWait bounds the wait for a session's answer to the registry
	// (settleTimeout; tests shorten it).
	answerWait time.Duration

	mu   sync.Mutex
	pids map[string]*actor.PID
	// users holds the user (Spec.Stored.User) of each session in pids
	// that has one. It is written with pids, under mu, by the one call
	// that registers the session: a refused create never touches it.
	users     map[string]string
	restoring map[string]*restoring
	// dormant holds what passivated sessions hand to their next actor.
	dormant map[string]*dormant
	// deleting holds the sessions Delete is deleting (with their
	// sub-agents): Get and Deliver do not restore them.
	deleting map[string]bool

	stop chan struct{}
	done sync.WaitGroup
}

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
}

// Failure turns why a session could not be reached (ErrNoSession, a store
// error, ...) into the error a request waiting for it is answered with.
type Failure func(id string, err error) *eventsv1.ErrorInfo

// RegistryOption configures a Registry.
type RegistryOption func(*Registry)

// WithRespec sets how stored sessions are resolved when restored; without
// it, a registry with a store cannot restore sessions.
func WithRespec(f Respec) RegistryOption {
	return func(r *Registry) { r.respec = f }
}

// WithChildRespec sets how the configuration of a sub-agent a session
// starts is resolved (where its owner's grant is checked); without it, as
// a restore's (WithRespec).
func WithChildRespec(f Respec) RegistryOption {
	return func(r *Registry) { r.child = f }
}

// childRespec is how a sub-agent's configuration is resolved; nil when
// it cannot be (a nil registry, or one without WithRespec).
func (r *Registry) childRespec() Respec {
	switch {
	case r == nil || r.respec == nil:
		return nil
	case r.child != nil:
		return r.child
	}
	return r.respec
}

// WithFailure sets how requests Deliver could not hand to a session are
// answered (default: invalid_session for ErrNoSession, else internal).
func WithFailure(f Failure) RegistryOption {
	return func(r *Registry) { r.fail = f }
}

// NewRegistry returns an empty registry whose sessions share env. With a
// store in env it renews the leases of its sessions until Shutdown.
func NewRegistry(system *actor.ActorSystem, env *Env, opts ...RegistryOption) *Registry {
	r := &Registry{system: system, env: env, pids: map[string]*actor.PID{}, users: map[string]string{}, restoring: map[string]*restoring{}, dormant: map[string]*dormant{}, deleting: map[string]bool{}, answerWait: settleTimeout}
	for _, o := range opts {
		o(r)
	}
	if env.Store != nil {
		r.stop = make(chan struct{})
		r.done.Add(1)
		go r.renew()
	}
	return r
}

// Spawn starts a session actor for spec, without recording it in the
// store: what Create does after recording it, and what tests use.
func (r *Registry) Spawn(spec Spec) (*actor.PID, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pids[spec.ID]; ok {
		return nil, fmt.Errorf("%w: %q", ErrSessionExists, spec.ID)
	}
	return r.spawnLocked(spec)
}

func (r *Registry) spawnLocked(spec Spec) (*actor.PID, error) {
	pid, err := r.system.Root.SpawnNamed(props(r.env, r, spec), "session/"+spec.ID)
	if err != nil {
		return nil, err
	}
	r.registerLocked(spec.ID, pid, spec.Stored.User)
	return pid, nil
}

// registerLocked makes pid the loaded session id, belonging to user.
func (r *Registry) registerLocked(id string, pid *actor.PID, user string) {
	r.pids[id] = pid
	if user != "" {
		r.users[id] = user
	}
}

// unregisterLocked takes session id out of pids and users, returning
// what they held.
func (r *Registry) unregisterLocked(id string) (pid *actor.PID, user string, ok bool) {
	pid, ok = r.pids[id]
	user = r.users[id]
	delete(r.pids, id)
	delete(r.users, id)
	return pid, user, ok
}

// Create starts a new session: with a store, it records the session
// (spec.Stored, and for an import the history and state of spec.Restore)
// and takes its lease first, and fails with ErrSessionExists when the id
// is taken, loaded or stored.
func (r *Registry) Create(ctx context.Context, spec Spec) (*actor.PID, error) {
	if r.Loaded(spec.ID) {
		return nil, fmt.Errorf("%w: %q", ErrSessionExists, spec.ID)
	}
	if st := r.env.Store; st != nil {
		if err := record(ctx, st, spec.ID, spec.Stored, spec.Restore); err != nil {
			if errors.Is(err, store.ErrExists) {
				return nil, fmt.Errorf("%w: %q", ErrSessionExists, spec.ID)
			}
			return nil, err
		}
		if err := st.Acquire(ctx, spec.ID, r.env.Node, r.env.leaseTTL()); err != nil {
			return nil, err
		}
	}
	pid, err := r.Spawn(spec)
	if err != nil {
		r.release(spec.ID)
	}
	return pid, err
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
		if r.env.Store == nil || r.respec == nil || r.deletingLocked(id) {
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if pid, ok := r.pids[id]; ok {
		// Under the lock, so that a passivation (which takes the session
		// out of pids under it) never misses a message sent before.
		r.system.Root.Send(pid, msg)
		return
	}
	c, ok := r.restoring[id]
	if !ok {
		if r.env.Store == nil || r.respec == nil || r.deletingLocked(id) {
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
func (r *Registry) beginLocked(id string) *restoring {
	c := &restoring{done: make(chan struct{})}
	r.restoring[id] = c
	go r.finishRestore(id, c)
	return c
}

// finishRestore restores session id for c and hands it what waited.
func (r *Registry) finishRestore(id string, c *restoring) {
	pid, user, err := r.restore(context.Background(), id)
	r.mu.Lock()
	c.pid, c.user, c.err = pid, user, err
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
	_ = r.system.Root.StopFuture(pid).Wait()
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
		r.system.Root.Send(env.Sender, &actor.DeadLetterResponse{Target: actor.NewPID(r.system.Address(), "session/"+id)})
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

// restore starts the actor of a stored session and waits until what the
// restore found (interrupted calls, the end of a cut run, agent_recovered)
// is stored and told, so the first use sees it in the ring as well; it
// returns the actor and the session's user. On failure the lease is given
// up, unless another node holds it.
func (r *Registry) restore(ctx context.Context, id string) (*actor.PID, string, error) {
	spec, err := r.load(ctx, id)
	if err == nil {
		var pid *actor.PID
		if pid, err = r.system.Root.SpawnNamed(props(r.env, r, spec), "session/"+id); err == nil {
			if err = r.settle(pid); err == nil {
				return pid, spec.Stored.User, nil
			}
			_ = r.system.Root.StopFuture(pid).Wait()
		}
	}
	if !errors.Is(err, store.ErrOwned) && !errors.Is(err, ErrNoSession) {
		r.release(id)
	}
	return nil, "", err
}

// settle waits until the session has stored everything it has told.
func (r *Registry) settle(pid *actor.PID) error {
	res, err := r.system.Root.RequestFuture(pid, &settled{}, r.answerWait).Result()
	if err != nil {
		return fmt.Errorf("restoring the session: %w", err)
	}
	if e := res.(*eventsv1.Reply).GetError(); e != nil {
		return fmt.Errorf("restoring the session: %s: %s", e.Code, e.Message)
	}
	return nil
}

// leasePoll bounds the time between two tries at a lease another node
// holds, while the restore waits for it (Env.LeaseWait): that node may
// give it up before it expires.
const leasePoll = 250 * time.Millisecond

// acquire takes the lease of session id. While another node holds it, it
// tries again until the lease is given up or expires, for up to
// Env.LeaseWait; then the store's ErrOwned stands.
func (r *Registry) acquire(ctx context.Context, id string) error {
	deadline := time.Now().Add(r.env.LeaseWait)
	for {
		err := r.env.Store.Acquire(ctx, id, r.env.Node, r.env.leaseTTL())
		var owned *store.OwnedError
		if err == nil || !errors.As(err, &owned) {
			return err
		}
		wait := min(max(time.Until(owned.Expires), 10*time.Millisecond), leasePoll)
		if time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// load takes the lease of a stored session and reads what its actor needs.
func (r *Registry) load(ctx context.Context, id string) (Spec, error) {
	st := r.env.Store
	if err := r.acquire(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Spec{}, fmt.Errorf("%w: %q", ErrNoSession, id)
		}
		return Spec{}, err
	}
	snap, err := st.Load(ctx, id)
	if err != nil {
		return Spec{}, err
	}
	spec, err := r.respec(id, snap.Config)
	if err != nil {
		return Spec{}, err
	}
	spec.Restore, spec.Stored = snap, snap.Config
	return spec, nil
}

// Page lists stored sessions (store.List). A session in the page that is
// not loaded here and whose record says a run was cut short by a crash is
// restored first, so the listing never shows a state that get_state would
// contradict; one another node holds is listed as stored.
func (r *Registry) Page(ctx context.Context, p store.Page) (*store.Listing, error) {
	page, err := r.env.Store.List(ctx, p)
	if err != nil {
		return nil, err
	}
	for _, s := range page.Sessions {
		if s.State != string(fsm.Idle) && !r.Loaded(s.ID) {
			_, _ = r.Get(ctx, s.ID) // on failure the record stands
		}
	}
	return page, nil
}

// Lookup finds a loaded session.
func (r *Registry) Lookup(id string) (*actor.PID, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, ok := r.pids[id]
	return pid, ok
}

// Sessions counts the loaded sessions of user, sub-agents aside.
func (r *Registry) Sessions(user string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id, u := range r.users {
		if u == user && !strings.Contains(id, "/") {
			n++
		}
	}
	return n
}

// User returns the user of session id (Spec.Stored.User, "" for nobody in
// particular) and whether the session is loaded here; a session that is
// not loaded has no user here.
func (r *Registry) User(id string) (user string, loaded bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, loaded = r.pids[id]
	return r.users[id], loaded
}

// Loaded reports whether session id runs here.
func (r *Registry) Loaded(id string) bool {
	_, ok := r.Lookup(id)
	return ok
}

// IDs lists the loaded sessions, sorted.
func (r *Registry) IDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.pids))
	for id := range r.pids {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Close stops a session, waits for it and gives up its lease (a stored
// session stays stored, to be restored on its next use); it reports
// whether the session was loaded.
func (r *Registry) Close(id string) bool {
	r.mu.Lock()
	delete(r.dormant, id)
	r.mu.Unlock()
	if !r.unload(id) {
		return false
	}
	r.release(id)
	return true
}

// Release hands session id over: once everything it has told is stored,
// it stops and gives up its lease, staying stored for its next use, here
// or on another node. A session being restored (or passivated) is handed
// over once that is done, unless Deliver or Get asks for it again first:
// otherwise the restore would leave it loaded here, its lease renewed for
// ever, though every caller looks for it elsewhere. It reports whether the
// session was loaded or being restored.
func (r *Registry) Release(id string) bool {
	r.mu.Lock()
	c, restoring := r.restoring[id]
	if restoring {
		c.released = true
	}
	pid, ok := r.pids[id]
	r.mu.Unlock()
	if restoring || !ok {
		return restoring
	}
	_ = r.settle(pid) // a session that cannot store is left as stored
	return r.Close(id)
}

// unload stops a session and waits for it, keeping its lease.
func (r *Registry) unload(id string) bool {
	r.mu.Lock()
	pid, _, ok := r.unregisterLocked(id)
	r.mu.Unlock()
	if ok {
		_ = r.system.Root.StopFuture(pid).Wait()
	}
	return ok
}

// Shutdown stops renewing leases, then closes every session.
func (r *Registry) Shutdown() {
	if r.stop != nil {
		close(r.stop)
		r.done.Wait()
		r.stop = nil
	}
	for _, id := range r.IDs() {
		r.Close(id)
	}
}

// renew renews the leases of the loaded sessions every third of the lease
// time until Shutdown; a session whose lease another node took is unloaded
// here, so it never runs on two nodes.
func (r *Registry) renew() {
	defer r.done.Done()
	ttl := r.env.leaseTTL()
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
			for _, id := range r.IDs() {
				if err := r.env.Store.Renew(context.Background(), id, r.env.Node, ttl); errors.Is(err, store.ErrOwned) {
					r.unload(id)
				}
			}
		}
	}
}

// release gives up a session's lease; a lease another node holds is not
// ours to give up, and that failure is fine.
func (r *Registry) release(id string) {
	if st := r.env.Store; st != nil {
		_ = st.Release(context.Background(), id, r.env.Node)
	}
}
