package tack

import (
	"fmt"
	"sync"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/policy"
	"github.com/tack-run/tack/store"
)

// Per-user limits of a policy (WithPolicy): max_sessions is checked here
// when a session is made (Spawn, Fork, Import) and, through the registry
// (placement.WithAdmit), when one is restored; max_running by the sessions
// themselves through runCounter when a prompt or steer would start a run.
// Past either the answer is rate_limited. A sub-agent counts toward
// max_sessions like any session, admitted by the registry as its parent's
// call makes it (placement's Create) or a command restores it (claim); its
// runs are its parent's while a call of the parent waits for it, its own
// otherwise (actors' limitedUser).

// admitSession admits a new or restored session of user, or answers
// rate_limited when user has max_sessions open already (made or restored
// here, being restored or passivated, not closed; sub-agents included). While a limit applies, the admission holds
// until release, which the caller calls once the registry has said yes
// or no, so that racing creates cannot both take the last place.
func (rt *Runtime) admitSession(user string) (release func(), err error) {
	limit := rt.policy.Limit(user).MaxSessions
	if limit == 0 || user == "" {
		return func() {}, nil
	}
	rt.admitting.Lock()
	if n := rt.registry.Sessions(user); n >= limit {
		rt.admitting.Unlock()
		return nil, &Error{Code: events.CodeRateLimited,
			Message: fmt.Sprintf("%s has %d sessions open, the most allowed (max_sessions): close one first", user, n)}
	}
	return rt.admitting.Unlock, nil
}

// runCounter counts each user's runs in progress against max_running
// (actors.RunLimiter).
type runCounter struct {
	policy *policy.Policy
	mu     sync.Mutex
	n      map[string]int
	// kept are the places of runs whose sessions stopped while they
	// waited for a person, by session id: the user they count for.
	kept map[string]string
}

func newRunCounter(p *policy.Policy) *runCounter {
	return &runCounter{policy: p, n: map[string]int{}, kept: map[string]string{}}
}

// Keep keeps the counted place of a run of user whose session id stopped.
func (c *runCounter) Keep(user, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.kept[id]; ok { // not reached: a session keeps one place
		c.endLocked(old)
	}
	c.kept[id] = user
}

// TakeUp hands session id's kept place, if any, to its restore.
func (c *runCounter) TakeUp(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	user := c.kept[id]
	delete(c.kept, id)
	return user
}

// Drop gives back the places kept for session id and its sub-agents.
func (c *runCounter) Drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for sid, user := range c.kept {
		if store.Within(sid, id) {
			delete(c.kept, sid)
			c.endLocked(user)
		}
	}
}

// Start counts a run of user unless user has max_running already.
func (c *runCounter) Start(user string, force bool) bool {
	max := c.Limit(user)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !force && max > 0 && c.n[user] >= max {
		return false
	}
	c.n[user]++
	return true
}

// End counts a run of user that ended.
func (c *runCounter) End(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(user)
}

// endLocked is End with c.mu held.
func (c *runCounter) endLocked(user string) {
	if c.n[user] <= 1 {
		delete(c.n, user)
		return
	}
	c.n[user]--
}

// Limit is user's max_running, 0 for none.
func (c *runCounter) Limit(user string) int { return c.policy.Limit(user).MaxRunning }
