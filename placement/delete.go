package placement

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/store"
)

// ErrInUse is returned by Delete with Unused for a session that is in use.
var ErrInUse = errors.New("session in use")

// DeleteOptions tune Registry.Delete.
type DeleteOptions struct {
	// Unused deletes the session only when nothing uses it: no run in
	// progress, no queued prompt or steering, no pending approval or
	// question, no subscriber, no lease another node holds. Else Delete
	// fails with ErrInUse and changes nothing. A retention sweep sets it.
	Unused bool
	// Clean, when set, removes what else the session keeps under its id
	// (its workspace) once Delete has removed the session. It runs before
	// the id is free again: Create refuses the id, and a sub-agent's,
	// until Delete returns, so a new session of the id never has what
	// Clean removes taken from it.
	Clean func()
	// Check, when set, is asked once the id is Delete's alone (Create
	// refuses it, restores under way are over), before anything is
	// removed: an error fails the Delete with it, and changes nothing.
	// It sees who the session is then, as no request can change it
	// (the caller's owner check, made before, could see an id that
	// changed hands since).
	Check func(ctx context.Context) error
}

// Delete removes session id and its sub-agents (<id>/...) for good: a run
// is aborted (kill_tools all), the loaded ones stop (their event streams
// end), and the store (or the Park) forgets them, history and lease
// included. From its
// start to its end Get and Deliver answer ErrNoSession for them, so that
// nothing restores them meanwhile; a restore or passivation under way is
// waited for. It fails with ErrNoSession when id is neither loaded nor
// stored. This is the one place a session is deleted: whatever else a
// session leaves behind is removed from here (DeleteOptions.Clean).
func (r *Registry) Delete(ctx context.Context, id string, opt DeleteOptions) error {
	r.mu.Lock()
	if r.deletingLocked(id) {
		r.mu.Unlock()
		return fmt.Errorf("%w: %q (being deleted)", ErrNoSession, id)
	}
	r.deleting[id] = true
	var waits []chan struct{}
	for sid, c := range r.restoring {
		if store.Within(sid, id) {
			waits = append(waits, c.done)
		}
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.deleting, id)
		r.mu.Unlock()
	}()
	for _, done := range waits {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if opt.Check != nil {
		if err := opt.Check(ctx); err != nil {
			return err
		}
	}
	if opt.Unused {
		if err := r.unused(ctx, id); err != nil {
			return err
		}
	}
	err := r.remove(ctx, id)
	if err == nil && opt.Clean != nil {
		opt.Clean()
	}
	return err
}

// remove stops session id and its loaded sub-agents, and has the store
// (or the Park) forget them: Delete, once it has the id to itself.
func (r *Registry) remove(ctx context.Context, id string) error {
	loaded := false
	for _, sid := range r.family(id) {
		if pid, ok := r.Lookup(sid); ok {
			_, _ = r.ask(pid, &eventsv1.Abort{KillTools: string(events.KillAll)}, time.Second)
		}
		loaded = r.unload(sid) || loaded
	}
	r.mu.Lock()
	r.forgetFamilyLocked(id)
	r.mu.Unlock()
	if st := r.env.Unloaded(); st != nil {
		err := st.Delete(ctx, id)
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
			if loaded {
				return nil
			}
			return fmt.Errorf("%w: %q", ErrNoSession, id)
		}
		return err
	}
	if !loaded {
		return fmt.Errorf("%w: %q", ErrNoSession, id)
	}
	return nil
}

// forgetFamilyLocked drops what the registry keeps for session id and
// its sub-agents once they are gone: the actor subscribers kept for them
// while passivated (a next session of an id, anyone's, would take them
// over) and which of them made sub-agents.
func (r *Registry) forgetFamilyLocked(id string) {
	for sid := range r.dormant {
		if store.Within(sid, id) {
			delete(r.dormant, sid)
		}
	}
	for p := range r.parents {
		if store.Within(p, id) {
			delete(r.parents, p)
		}
	}
}

// family lists the loaded sessions Delete(id) stops: id first, then its
// sub-agents (a parent stops before its children, so it starts no more).
func (r *Registry) family(id string) []string {
	ids := slices.DeleteFunc(r.IDs(), func(sid string) bool { return !store.Within(sid, id) })
	slices.SortStableFunc(ids, func(a, b string) int { return len(a) - len(b) })
	return ids
}

// beingDeleted reports whether session id, or a session it is a sub-agent
// of, is being deleted.
func (r *Registry) beingDeleted(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.deletingLocked(id)
}

// deletingLocked is beingDeleted with r.mu held.
func (r *Registry) deletingLocked(id string) bool {
	for d := range r.deleting {
		if store.Within(id, d) {
			return true
		}
	}
	return false
}

// unused answers ErrInUse when session id is in use (DeleteOptions.Unused):
// loaded here, it asks the session; passivated, it looks at the
// subscriptions kept for it; stored only, at what the store holds.
func (r *Registry) unused(ctx context.Context, id string) error {
	if pid, ok := r.Lookup(id); ok {
		res, err := r.ask(pid, &actors.InUse{}, r.answerWait)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInUse, err)
		}
		if e := res.(*eventsv1.Reply).GetError(); e != nil {
			return fmt.Errorf("%w: %s", ErrInUse, e.Message)
		}
		return nil
	}
	r.mu.Lock()
	d := r.dormant[id]
	r.mu.Unlock()
	if d != nil && len(d.subs) > 0 {
		return fmt.Errorf("%w: an event stream is open", ErrInUse)
	}
	st := r.env.Store
	if st == nil {
		return nil
	}
	snap, err := st.Get(ctx, id)
	if err != nil {
		return err
	}
	v := snap.Volatile
	switch {
	case snap.State != string(fsm.Idle) || v.RunID != "":
		return fmt.Errorf("%w: a run was in progress", ErrInUse)
	case len(v.PromptQueue) > 0 || len(v.SteeringQueue) > 0:
		return fmt.Errorf("%w: input is queued", ErrInUse)
	case len(v.Approvals) > 0 || v.Question != nil:
		return fmt.Errorf("%w: an approval or a question is pending", ErrInUse)
	case snap.Owner != "" && snap.Owner != r.env.Node && snap.LeaseExpires.After(time.Now()):
		return fmt.Errorf("%w: node %s holds it", ErrInUse, snap.Owner)
	}
	return nil
}
