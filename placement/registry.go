package placement

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/internal/replies"
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

// Registry spawns, finds and closes the session actors of one actor
// system. With a store (Env.Store) it is also the one place that keeps the
// life of a stored session: Create records a session before it starts; Get
// restores a stored session on its first use, whatever that use is, once
// even when many ask at the same time; the leases of loaded sessions are
// renewed until Shutdown; Close stops a session and gives its lease up.
// Without a store but with a Park (Env.Park), it keeps the parked
// sessions' life the same way: Get and Deliver wake them, Delete and
// Close forget them. It is the actors.Place of the sessions it spawns.
type Registry struct {
	system *actor.ActorSystem
	env    *actors.Env
	respec actors.Respec
	// child resolves sub-agents' configurations; nil: as respec.
	child actors.Respec

	fail Failure
	// admit admits a restore against its user's bound (WithAdmit).
	admit Admit
	// answerWait bounds the wait for a session's answer to the registry's
	// questions (Settle, InUse): settleTimeout.
	answerWait time.Duration
	// replies waits for the sessions' answers (ask.go).
	replies *replies.Pool

	// mu guards what follows. Deliver to a loaded session holds it for
	// reading only, so that commands to different sessions do not queue
	// on it (issue 30, finding 25); whatever changes pids takes it whole.
	mu   sync.RWMutex
	pids map[string]*actor.PID
	// users holds the user (Spec.Stored.User) of each session in pids
	// that has one. It is written with pids, under mu, by the one call
	// that registers the session: a refused create never touches it.
	users map[string]string
	// peak is the most sessions pids held since it was last made anew:
	// a Go map keeps the room it grew to, so once the sessions loaded
	// fall to a quarter of it, pids and users are made again at their
	// size (unregisterLocked).
	peak      int
	restoring map[string]*restoring
	// dormant holds what passivated sessions hand to their next actor.
	dormant map[string]*dormant
	// deleting holds the sessions Delete is deleting (with their
	// sub-agents): Get and Deliver do not restore them.
	deleting map[string]bool
	// parents holds, without a store, the sessions that have made
	// sub-agents: a parent closed there is gone, and its sub-agents go
	// with it (endSubagents).
	parents map[string]bool

	// renewing ends with Shutdown: the lease renewal's loop, and a call
	// of it under way, stop (stopRenewing; done when the loop returned).
	renewing     context.Context
	stopRenewing context.CancelFunc
	done         sync.WaitGroup
}

// Failure turns why a session could not be reached (ErrNoSession, a store
// error, ...) into the error a request waiting for it is answered with.
type Failure func(id string, err error) *eventsv1.ErrorInfo

// RegistryOption configures a Registry.
type RegistryOption func(*Registry)

// WithRespec sets how stored sessions are resolved when restored; without
// it, a registry with a store cannot restore sessions.
func WithRespec(f actors.Respec) RegistryOption {
	return func(r *Registry) { r.respec = f }
}

// WithChildRespec sets how the configuration of a sub-agent a session
// starts is resolved (where its owner's grant is checked); without it, as
// a restore's (WithRespec).
func WithChildRespec(f actors.Respec) RegistryOption {
	return func(r *Registry) { r.child = f }
}

// childRespec is how a sub-agent's configuration is resolved; nil when
// it cannot be (a nil registry, or one without WithRespec).
func (r *Registry) ChildRespec() actors.Respec {
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

// Admit admits one more loaded session of user, or refuses it with the
// error that answers the restore's waiters. An admission holds until
// release: the registry counts the restore (Sessions) before it releases
// it, so that racing admissions cannot both take the last place.
type Admit func(user string) (release func(), err error)

// WithAdmit has every restore of a session with a user admitted by admit
// once its record is read, before its actor starts, and every sub-agent
// a session's call makes (Create) before it is recorded: a user's bound
// on loaded sessions then holds for sessions that come back (after a
// close, a passivation or a restart) and for a parent's children as for
// the sessions the user makes.
func WithAdmit(admit Admit) RegistryOption {
	return func(r *Registry) { r.admit = admit }
}

var _ actors.Place = (*Registry)(nil)

// New returns an empty registry whose sessions share env. With a
// store in env it renews the leases of its sessions until Shutdown.
func New(system *actor.ActorSystem, env *actors.Env, opts ...RegistryOption) *Registry {
	r := &Registry{system: system, env: env, pids: map[string]*actor.PID{}, users: map[string]string{}, restoring: map[string]*restoring{}, dormant: map[string]*dormant{}, deleting: map[string]bool{}, parents: map[string]bool{}, answerWait: settleTimeout, replies: replies.New(system)}
	for _, o := range opts {
		o(r)
	}
	if env.Store != nil {
		r.renewing, r.stopRenewing = context.WithCancel(context.Background())
		r.done.Add(1)
		go r.renew()
	}
	return r
}

// Spawn starts a session actor for spec, without recording it in the
// store: what Create does after recording it, and what tests use.
func (r *Registry) Spawn(spec actors.Spec) (*actor.PID, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pids[spec.ID]; ok || r.parkedLocked(spec.ID) {
		return nil, fmt.Errorf("%w: %q", ErrSessionExists, spec.ID)
	}
	return r.spawnLocked(spec)
}

// parkedLocked reports whether session id is parked (Env.Park), or being
// parked or woken: a session that exists, though not loaded.
func (r *Registry) parkedLocked(id string) bool {
	if r.env.Store != nil || r.env.Park == nil {
		return false
	}
	if c, ok := r.restoring[id]; ok && !c.making {
		return true
	}
	_, err := r.env.Park.Get(context.Background(), id)
	return err == nil
}

func (r *Registry) spawnLocked(spec actors.Spec) (*actor.PID, error) {
	pid, err := actors.Spawn(r.system.Root, r.env, r, spec, actors.Name(spec.ID))
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
	r.peak = max(r.peak, len(r.pids))
}

// unregisterLocked takes session id out of pids and users, returning
// what they held. When the sessions loaded have fallen to a quarter of
// the most pids held, it makes both maps anew: a burst of 20,000
// sessions that then parked left 44 bytes each in empty room
// (TestRegistryGivesBackRoom). The copy, under the lock, is of a quarter
// of the peak, once each time the sessions loaded fall that far.
func (r *Registry) unregisterLocked(id string) (pid *actor.PID, user string, ok bool) {
	pid, ok = r.pids[id]
	user = r.users[id]
	delete(r.pids, id)
	delete(r.users, id)
	if r.peak >= shrinkFrom && len(r.pids) <= r.peak/4 {
		r.pids, r.users = remade(r.pids), remade(r.users)
		r.peak = len(r.pids)
	}
	return pid, user, ok
}

// remade copies m into a map made for its size (maps.Clone keeps the
// room m grew to).
func remade[K comparable, V any](m map[K]V) map[K]V {
	n := make(map[K]V, len(m))
	for k, v := range m {
		n[k] = v
	}
	return n
}

// shrinkFrom is the fewest sessions pids must have held for
// unregisterLocked to make it anew: below it the room is not worth the
// copy.
const shrinkFrom = 1024

// Create starts a new session: with a store, it records the session
// (spec.Stored, and for an import the history and state of spec.Restore)
// and takes its lease first, and fails with ErrSessionExists when the id
// is taken, loaded or stored. A sub-agent is admitted first (WithAdmit):
// its parent's call makes it, its owner's sessions made elsewhere are
// admitted by whoever makes them. A session of spec.Parked, in a runtime
// that parks (Env.Park), is made parked: Create returns no actor, and
// the session's first command starts it.
func (r *Registry) Create(ctx context.Context, spec actors.Spec) (*actor.PID, error) {
	spec = spec.Shared()
	release, err := r.admitChild(spec)
	if err != nil {
		return nil, err
	}
	defer release()
	c, err := r.making(spec.ID)
	if err != nil {
		return nil, err
	}
	pid, err := r.create(ctx, spec)
	r.made(spec.ID, c, pid)
	return pid, err
}

// create records the session, takes its lease and starts its actor.
func (r *Registry) create(ctx context.Context, spec actors.Spec) (*actor.PID, error) {
	if st := r.env.Store; st != nil {
		if err := actors.Record(ctx, st, spec.ID, *spec.Stored, spec.Restore); err != nil {
			if errors.Is(err, store.ErrExists) {
				return nil, fmt.Errorf("%w: %q", ErrSessionExists, spec.ID)
			}
			return nil, err
		}
		if err := st.Acquire(ctx, spec.ID, r.env.Node, leaseTTL(r.env)); err != nil {
			return nil, err
		}
	}
	if spec.Parked && r.env.Park != nil {
		return nil, r.parkNew(spec)
	}
	pid, err := r.Spawn(spec)
	if err != nil {
		r.release(spec.ID)
	}
	return pid, err
}

// parkNew makes the session of spec parked (actors.ParkNew): Create then
// returns no actor, and the session's first command starts it.
func (r *Registry) parkNew(spec actors.Spec) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.parkedLocked(spec.ID) {
		return fmt.Errorf("%w: %q", ErrSessionExists, spec.ID)
	}
	return actors.ParkNew(r.env, spec)
}

// making claims id for the session Create makes, unless it is taken
// (loaded, being restored, passivated or deleted): until made, Get and
// Deliver of the id wait, as during a passivation. A lookup between the
// session's record and its actor restored the session from that first
// record: a second incarnation, whose race for the actor's name gave the
// lease up under the first.
func (r *Registry) making(id string) (*restoring, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, loaded := r.pids[id]
	_, busy := r.restoring[id]
	if loaded || busy || r.deletingLocked(id) {
		return nil, fmt.Errorf("%w: %q", ErrSessionExists, id)
	}
	if i := strings.LastIndexByte(id, '/'); i > 0 && r.env.Store == nil {
		// A sub-agent's parent is running the call that makes it. One
		// whose Close took it out already ends its sub-agents, and would
		// miss one made after (endSubagents).
		parent := id[:i]
		if _, ok := r.pids[parent]; !ok {
			return nil, fmt.Errorf("%w: %q (its parent %q is closed)", ErrNoSession, id, parent)
		}
		r.parents[parent] = true
	}
	c := &restoring{done: make(chan struct{}), passivating: true, making: true}
	r.restoring[id] = c
	return c, nil
}

// made ends making: what was delivered meanwhile goes to pid, in order
// (or, when no session was made, to a restore of the stored one, if any),
// and the lookups that waited look again.
func (r *Registry) made(id string, c *restoring, pid *actor.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.restoring, id)
	close(c.done)
	switch {
	case pid != nil:
		for _, m := range c.queue {
			r.system.Root.Send(pid, m)
		}
	case len(c.queue) > 0 && r.env.Unloaded() != nil && r.respec != nil:
		r.beginLocked(id).queue = c.queue
	default:
		for _, m := range c.queue {
			r.refuse(id, m, fmt.Errorf("%w: %q", ErrNoSession, id))
		}
	}
}

// admitChild admits the sub-agent spec against its user's bound, held
// until release, as claim admits a restore; any other session is
// admitted by its maker (the runtime's create, fork or import).
func (r *Registry) admitChild(spec actors.Spec) (release func(), err error) {
	if r.admit == nil || spec.Stored.User == "" || !subAgent(spec.ID) {
		return func() {}, nil
	}
	return r.admit(spec.Stored.User)
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

// Sessions counts the loaded sessions of user, sub-agents included, with
// those being restored for user (admitted) and those passivating.
func (r *Registry) Sessions(user string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, u := range r.users {
		if u == user {
			n++
		}
	}
	for _, c := range r.restoring {
		if c.user == user {
			n++
		}
	}
	return n
}

// subAgent reports whether id is a sub-agent's (parent/child).
func subAgent(id string) bool { return strings.Contains(id, "/") }

// User returns the user of session id (Spec.Stored.User, "" for nobody in
// particular) and whether the session is loaded here; a session that is
// not loaded has no user here.
func (r *Registry) User(id string) (user string, loaded bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, loaded = r.pids[id]
	return r.users[id], loaded
}

// Owner returns the user of session id ("" for nobody in particular) if
// the session is loaded here, or the user a passivation or restore under
// way counts it for. A session parked or stored is neither, and its
// record says whose it is; one woken from its record is registered in
// the same step as the record of a parked one goes (settleQueueLocked),
// so a caller that found no record and asks again finds it here.
func (r *Registry) Owner(id string) (user string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pids[id]; ok {
		return r.users[id], true
	}
	if c, ok := r.restoring[id]; ok && !c.making && c.user != "" {
		return c.user, true
	}
	return "", false
}

// Loaded reports whether session id runs here.
func (r *Registry) Loaded(id string) bool {
	_, ok := r.Lookup(id)
	return ok
}

// Actor is a session whose actor answers, as Actors lists it.
type Actor struct {
	ID, User string
	PID      *actor.PID
}

// Actors lists the sessions whose actors answer: the loaded ones, and
// those passivating, whose actor answers until it has parked or stored
// itself and stopped. A list of sessions that reads these, then the
// stored or parked ones, then these again, misses none that parks or
// wakes meanwhile — a session's record is written before its actor stops
// answering, and goes as its next actor is registered — unless it does
// both, which takes a quiet period, while the list is read.
func (r *Registry) Actors() []Actor {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Actor, 0, len(r.pids))
	for id, pid := range r.pids {
		out = append(out, Actor{ID: id, User: r.users[id], PID: pid})
	}
	for id, c := range r.restoring {
		if c.leaving != nil {
			out = append(out, Actor{ID: id, User: c.user, PID: c.leaving})
		}
	}
	return out
}

// IDs lists the loaded sessions, sorted. It sorts them out of the
// registry's lock: sorting 10,000 ids under it took a millisecond or two,
// which tipped the lock into handing itself from waiter to waiter while a
// storm of passivations queued on it (issue 30, finding 19).
func (r *Registry) IDs() []string {
	r.mu.Lock()
	ids := make([]string, 0, len(r.pids))
	for id := range r.pids {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	sort.Strings(ids)
	return ids
}

// Close stops a session, waits for it and gives up its lease (a stored
// session stays stored, to be restored on its next use; a parked one is
// forgotten); it reports whether the session was loaded or parked. A
// passivation or a restore under way is waited for first: the session,
// out of the registry meanwhile, would otherwise park after Close had
// found nothing to close, or be restored from a record Close had just
// forgotten, and come back at its next use (a session made parked is
// restored by its first command, which a Close may follow at once).
// Without a store a closed session is gone, and its sub-agents go with
// it (endSubagents).
func (r *Registry) Close(id string) bool { return r.CloseOwned(id, "") }

// CloseOwned is Close of a session of user ("": anyone's): one that is
// not loaded for user when the registry takes it to close is left as it
// is (false), so that a close whose caller checked the owner before the
// id changed hands closes nobody else's session.
func (r *Registry) CloseOwned(id, user string) bool {
	if !r.closeOne(id, user) {
		return false
	}
	if r.env.Store == nil {
		r.endSubagents(id)
	}
	return true
}

// endSubagents closes the sub-agents of session id, which is gone (no
// store), loaded, parked or being woken: left behind, they held the ids
// the next session of id would give its own sub-agents, and a Delete of
// that session, anyone's, would have taken them.
func (r *Registry) endSubagents(id string) {
	r.mu.Lock()
	if !r.parents[id] {
		r.mu.Unlock()
		return
	}
	r.forgetFamilyLocked(id)
	if r.env.Park != nil {
		// Under the lock, as unparkLocked: no wake starts from them.
		r.env.Park.RemoveWithin(id)
	}
	var loaded []string
	for sid := range r.pids {
		if store.Within(sid, id) {
			loaded = append(loaded, sid)
		}
	}
	for sid := range r.restoring {
		if store.Within(sid, id) && !slices.Contains(loaded, sid) {
			loaded = append(loaded, sid)
		}
	}
	r.mu.Unlock()
	slices.SortFunc(loaded, func(a, b string) int { return len(a) - len(b) }) // a parent before its children
	for _, sid := range loaded {
		r.closeOne(sid, "")
	}
}

// closeOne is CloseOwned of session id alone.
func (r *Registry) closeOne(id, user string) bool {
	stand := &restoring{done: make(chan struct{}), passivating: true}
	deadline := time.Now().Add(stopWait)
	r.mu.Lock()
	for {
		c, busy := r.restoring[id]
		if !busy || !time.Now().Before(deadline) {
			break
		}
		r.mu.Unlock()
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-c.done: // parked, stored, woken or back in the registry: closed below
		case <-t.C:
		}
		t.Stop()
		r.mu.Lock() // and look again: a command may have started a restore meanwhile
	}
	if _, loaded := r.pids[id]; user != "" && (!loaded || r.users[id] != user) {
		gone := !loaded && r.unparkLocked(id, user)
		r.mu.Unlock()
		return gone
	}
	delete(r.dormant, id)
	var pid *actor.PID
	var ok bool
	if r.env.Store != nil {
		// Until the lease is given up, what asks for the session waits,
		// as during a passivation, and restores it afterwards (gone): a
		// restore in between would take the lease that this Close then
		// gives up, and the restored session could store nothing.
		pid, ok = r.standInLocked(id, stand)
	} else if pid, _, ok = r.unregisterLocked(id); !ok {
		// A parked session is gone once closed, as a loaded one is
		// without a store. Its record goes under the lock: a command
		// that came after it would otherwise start a restore from it,
		// and the session would come back after this Close.
		gone := r.env.Park != nil && r.env.Park.Remove(id)
		r.mu.Unlock()
		return gone
	}
	r.mu.Unlock()
	if !ok {
		return false
	}
	r.stopping(pid).wait()
	r.gone(id)
	return true
}

// unparkLocked forgets session id if it is parked (Env.Park) and
// belongs to user: a parked session is gone once closed.
func (r *Registry) unparkLocked(id, user string) bool {
	if _, busy := r.restoring[id]; busy || r.env.Store != nil || r.env.Park == nil {
		return false
	}
	if snap, err := r.env.Park.Get(context.Background(), id); err != nil || snap.Config.User != user {
		return false
	}
	if !r.env.Park.Remove(id) {
		return false
	}
	// The actor subscribers it kept go with it: a next session of the
	// id, anyone's, would otherwise take them over (settleQueueLocked).
	delete(r.dormant, id)
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
	s, ok := r.unloading(id)
	if ok {
		s.wait()
	}
	return ok
}

// unloading takes a loaded session out of the registry and tells it to
// stop; it returns the wait for it, or false when id is not loaded.
func (r *Registry) unloading(id string) (stopped, bool) {
	r.mu.Lock()
	pid, _, ok := r.unregisterLocked(id)
	r.mu.Unlock()
	if !ok {
		return stopped{}, false
	}
	return r.stopping(pid), true
}

// Shutdown stops renewing leases, then closes every session: each is
// told to stop, in the order of their ids (a parent before its
// sub-agents), before any is waited for, so a session that waits for its
// write under way as it stops (a store that hangs holds it up to the
// write's timeout) holds up none of the others. Their leases are then
// given up together, each within leaseTimeout: with its store down or
// hung, Shutdown takes the longest of the sessions' stops and one
// lease's timeout, however many sessions it closes.
func (r *Registry) Shutdown() {
	if r.stopRenewing != nil {
		r.stopRenewing()
		r.done.Wait()
		r.stopRenewing = nil
	}
	var unloaded []string
	var waits []stopped
	for _, id := range r.IDs() {
		r.mu.Lock()
		delete(r.dormant, id)
		r.mu.Unlock()
		if s, ok := r.unloading(id); ok {
			unloaded = append(unloaded, id)
			waits = append(waits, s)
		}
	}
	for _, w := range waits {
		w.wait()
	}
	var released sync.WaitGroup
	for _, id := range unloaded {
		released.Go(func() { r.release(id) })
	}
	released.Wait()
	r.replies.Close()
}
