package actors

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// ErrSessionExists is returned by Spawn for an id already in use.
var ErrSessionExists = errors.New("session exists")

// stopTimeout bounds how long Close waits for a session actor to stop.
const stopTimeout = 5 * time.Second

// Registry spawns, finds and closes the session actors of one actor system.
type Registry struct {
	system *actor.ActorSystem
	env    *Env

	mu   sync.RWMutex
	pids map[string]*actor.PID
}

// NewRegistry returns an empty registry whose sessions share env.
func NewRegistry(system *actor.ActorSystem, env *Env) *Registry {
	return &Registry{system: system, env: env, pids: map[string]*actor.PID{}}
}

// Spawn starts a session actor for spec.
func (r *Registry) Spawn(spec Spec) (*actor.PID, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pids[spec.ID]; ok {
		return nil, fmt.Errorf("%w: %q", ErrSessionExists, spec.ID)
	}
	pid, err := r.system.Root.SpawnNamed(Props(r.env, spec), "session/"+spec.ID)
	if err != nil {
		return nil, err
	}
	r.pids[spec.ID] = pid
	return pid, nil
}

// Lookup finds a live session.
func (r *Registry) Lookup(id string) (*actor.PID, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	pid, ok := r.pids[id]
	return pid, ok
}

// IDs lists the live sessions, sorted.
func (r *Registry) IDs() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids := make([]string, 0, len(r.pids))
	for id := range r.pids {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Close stops a session and waits for it; it reports whether it existed.
func (r *Registry) Close(id string) bool {
	r.mu.Lock()
	pid, ok := r.pids[id]
	delete(r.pids, id)
	r.mu.Unlock()
	if ok {
		_ = r.system.Root.StopFuture(pid).Wait()
	}
	return ok
}

// CloseAll stops every session.
func (r *Registry) CloseAll() {
	for _, id := range r.IDs() {
		r.Close(id)
	}
}
