package tack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/placement"
)

// Delete removes session id for good (delete_session): a run in progress
// is aborted with kill_tools all, its event streams end, and the session,
// its sub-agents (<id>/sub-N, at any depth), history, queues and lease
// leave memory and the store, and its workspace (WithWorkspaces) goes
// with everything in it. Afterwards id is invalid_session
// everywhere, and may be used again. A session that lives elsewhere
// (WithSessionsElsewhere) is deleted where it lives. What OnDelete
// registered is told.
func (rt *Runtime) Delete(ctx context.Context, id string) error { return rt.reach.delete(ctx, id) }

// OnDelete has f told the id of each session this runtime deletes
// (Delete, and Sweep's deletions), once the session is gone: what a
// server keeps of a session besides the runtime (A2A tasks) goes with it.
// Its sub-agents (<id>/sub-N) went with it and are not told apart. f runs
// on the deleting goroutine and must not block. stop ends the telling.
func (rt *Runtime) OnDelete(f func(id string)) (stop func()) { return rt.deletions.add(f) }

// deletions are the functions OnDelete registered.
type deletions struct {
	mu   sync.Mutex
	next int
	fs   map[int]func(id string)
}

// add registers f until the returned stop is called.
func (d *deletions) add(f func(id string)) (stop func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fs == nil {
		d.fs = map[int]func(string){}
	}
	key := d.next
	d.next++
	d.fs[key] = f
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		delete(d.fs, key)
	}
}

// tell tells every registered function that session id was deleted.
func (d *deletions) tell(id string) {
	d.mu.Lock()
	fs := make([]func(string), 0, len(d.fs))
	for _, f := range d.fs {
		fs = append(fs, f)
	}
	d.mu.Unlock()
	for _, f := range fs {
		f(id)
	}
}

// Delete removes the session for good: Runtime.Delete.
func (s *Session) Delete(ctx context.Context) error { return s.rt.Delete(ctx, s.id) }

// delete is Delete of a session of this process. For a user (ForUser),
// the session is deleted only if it is theirs when the registry holds
// the id for the Delete: else it is invalid_session.
func (l *local) delete(ctx context.Context, id string) error {
	var opt placement.DeleteOptions
	if u := UserOf(ctx); u != "" {
		opt.Check = func(ctx context.Context) error {
			if owner, err := l.rt.User(ctx, id); err != nil || owner != u {
				return fmt.Errorf("%w: %q", placement.ErrNoSession, id)
			}
			return nil
		}
	}
	return l.remove(ctx, id, opt)
}

// remove deletes session id of this process as opt says.
func (l *local) remove(ctx context.Context, id string, opt placement.DeleteOptions) error {
	rt := l.rt
	// The workspace goes while the registry still holds the id: removed
	// after, it could take the files of a new session of the id.
	var wsErr error
	opt.Clean = func() { wsErr = rt.workspaces.Remove(id) }
	if err := rt.registry.Delete(ctx, id, opt); err != nil {
		if errors.Is(err, placement.ErrInUse) {
			return &Error{Code: events.CodeBusy, Message: err.Error()}
		}
		return registryError(id, err)
	}
	rt.deletions.tell(id)
	rt.mcpGroups.Delete(id)
	if rt.env.Runs != nil {
		rt.env.Runs.Drop(id) // a place its waiting run kept, unloaded
	}
	if wsErr != nil {
		return &Error{Code: events.CodeInternal, Message: "session " + id + " is deleted, but not its workspace: " + wsErr.Error()}
	}
	return nil
}

// Retention sweeps: at least every tenth of the retention time, between
// these bounds.
const (
	minSweepEvery = time.Second
	maxSweepEvery = time.Hour
)

// SweepEvery is how often Retain sweeps for a retention time of maxAge: a
// tenth of it, between 1 s and 1 h.
func SweepEvery(maxAge time.Duration) time.Duration {
	return min(max(maxAge/10, minSweepEvery), maxSweepEvery)
}

// Sweep deletes the stored sessions (sub-agents go with their parent)
// whose last change is older than maxAge by the runtime's clock
// (WithClock), unless they are in use: a run in progress, queued input, a
// pending approval or question, an open event stream, or a lease another
// node holds keeps a session. It returns the ids it deleted. A runtime
// without a store, or whose sessions live elsewhere, sweeps nothing.
func (rt *Runtime) Sweep(ctx context.Context, maxAge time.Duration) ([]string, error) {
	if rt.env.Store == nil || maxAge <= 0 {
		return nil, nil
	}
	return rt.reach.sweep(ctx, maxAge)
}

// sweep deletes this process's stale sessions, a page at a time.
func (l *local) sweep(ctx context.Context, maxAge time.Duration) ([]string, error) {
	rt, st := l.rt, l.rt.env.Store
	cut := rt.now().Add(-maxAge)
	var deleted []string
	skip := map[string]bool{}
	for {
		ids, err := st.Stale(ctx, cut, 0)
		if err != nil {
			return deleted, err
		}
		progress := false
		for _, id := range ids {
			if skip[id] {
				continue
			}
			progress = true
			switch err := l.remove(ctx, id, placement.DeleteOptions{Unused: true}); {
			case err == nil:
				deleted = append(deleted, id)
			case Code(err) == events.CodeBusy || Code(err) == events.CodeInvalidSession:
				skip[id] = true
			default:
				return deleted, err
			}
		}
		if !progress {
			return deleted, nil
		}
	}
}

// Retain sweeps (Sweep) every SweepEvery(maxAge) until ctx ends; failed
// sweeps are logged and tried again at the next tick. maxAge <= 0 returns
// at once: sessions are kept.
func (rt *Runtime) Retain(ctx context.Context, maxAge time.Duration) {
	if maxAge <= 0 {
		return
	}
	tick := time.NewTicker(SweepEvery(maxAge))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_, err := rt.Sweep(ctx, maxAge)
			if l := rt.env.Logger; l != nil && err != nil && ctx.Err() == nil {
				l.Warn("retention sweep failed", zap.Error(err))
			}
		}
	}
}

// now is the runtime's clock (WithClock), time.Now without one.
func (rt *Runtime) now() time.Time {
	if rt.env.Clock != nil {
		return rt.env.Clock()
	}
	return time.Now()
}
