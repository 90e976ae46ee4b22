package actors

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// testPlace is the Place of this package's tests: it spawns sessions by
// id and makes sub-agents (resolved by respec), and never passivates.
// Restores, leases and passivation are package placement's, and tested
// there.
type testPlace struct {
	sys    *actor.ActorSystem
	env    *Env
	respec Respec
	mu     sync.Mutex
	pids   map[string]*actor.PID
	// leaves counts the sessions' Leave calls, which it refuses.
	leaves atomic.Int32
}

var _ Place = (*testPlace)(nil)

// testPluginBudget is the plugin budget of sessions whose test sets none:
// a test of what plugins do must not fail because a loaded machine (under
// -race) left a plugin's goroutine unscheduled for the default 50 ms, as
// TestEveryActionOfEveryHook once did (before_tool's replace_tool_args
// timed out and the call ran with its own arguments). Tests of the budget
// set their own.
const testPluginBudget = 10 * time.Second

// newPlace returns a place for sessions sharing env; respec nil: it makes
// no sub-agents.
func newPlace(sys *actor.ActorSystem, env *Env, respec Respec) *testPlace {
	if env.PluginBudget == 0 {
		env.PluginBudget = testPluginBudget
	}
	return &testPlace{sys: sys, env: env, respec: respec, pids: map[string]*actor.PID{}}
}

// Spawn starts the session of spec, recording nothing in the store.
func (p *testPlace) Spawn(spec Spec) (*actor.PID, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pids[spec.ID]; ok {
		return nil, fmt.Errorf("session %q exists", spec.ID)
	}
	pid, err := Spawn(p.sys.Root, p.env, p, spec, "session/"+spec.ID)
	if err == nil {
		p.pids[spec.ID] = pid
	}
	return pid, err
}

// Create records the session in the store, when there is one, and
// starts it.
func (p *testPlace) Create(ctx context.Context, spec Spec) (*actor.PID, error) {
	spec = spec.Shared()
	if st := p.env.Store; st != nil {
		if err := Record(ctx, st, spec.ID, *spec.Stored, spec.Restore); err != nil {
			return nil, err
		}
		if err := st.Acquire(ctx, spec.ID, p.env.Node, time.Minute); err != nil {
			return nil, err
		}
	}
	return p.Spawn(spec)
}

// Close stops session id and waits for it.
func (p *testPlace) Close(id string) bool {
	p.mu.Lock()
	pid, ok := p.pids[id]
	delete(p.pids, id)
	p.mu.Unlock()
	if ok {
		_ = p.sys.Root.StopFuture(pid).Wait()
	}
	return ok
}

// Lookup finds session id.
func (p *testPlace) Lookup(id string) (*actor.PID, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pid, ok := p.pids[id]
	return pid, ok
}

// Shutdown closes every session.
func (p *testPlace) Shutdown() {
	p.mu.Lock()
	ids := make([]string, 0, len(p.pids))
	for id := range p.pids {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	for _, id := range ids {
		p.Close(id)
	}
}

func (p *testPlace) ChildRespec() Respec { return p.respec }

// Get finds session id: this place restores nothing.
func (p *testPlace) Get(_ context.Context, id string) (*actor.PID, error) {
	if pid, ok := p.Lookup(id); ok {
		return pid, nil
	}
	return nil, fmt.Errorf("no session %q", id)
}

// Leave never lets a session go: it stays loaded.
func (p *testPlace) Leave(string, *actor.PID) bool { p.leaves.Add(1); return false }
func (p *testPlace) Stay(string, *actor.PID)       {}
func (p *testPlace) Left(string, []*SubscribePID)  {}
func (p *testPlace) Gone(string)                   {}
