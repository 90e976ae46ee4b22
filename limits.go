package tack

import (
	"fmt"
	"strings"
	"sync"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/policy"
)

// Per-user limits of a policy (WithPolicy): max_sessions is checked here
// when a session is made (Spawn, Fork), max_running by the sessions
// themselves through runCounter when a prompt or steer would start a run.
// Past either the answer is rate_limited. Sub-agents are their parent's
// and count toward neither.

// admitSession records user as the owner of the session id about to be
// made, or answers rate_limited when user has max_sessions open already:
// made or restored here, and not closed (sub-agents aside).
func (rt *Runtime) admitSession(id, user string) error {
	max := rt.policy.Limit(user).MaxSessions
	if max == 0 || user == "" {
		rt.setUser(id, user)
		return nil
	}
	rt.admitting.Lock()
	defer rt.admitting.Unlock()
	n := 0
	rt.users.Range(func(k, v any) bool {
		if v == user && !strings.Contains(k.(string), "/") {
			n++
		}
		return true
	})
	if n >= max {
		return &Error{Code: events.CodeRateLimited,
			Message: fmt.Sprintf("%s has %d sessions open, the most allowed (max_sessions): close one first", user, n)}
	}
	rt.setUser(id, user)
	return nil
}

// runCounter counts each user's runs in progress against max_running
// (actors.RunLimiter).
type runCounter struct {
	policy *policy.Policy
	mu     sync.Mutex
	n      map[string]int
}

func newRunCounter(p *policy.Policy) *runCounter { return &runCounter{policy: p, n: map[string]int{}} }

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
	if c.n[user] <= 1 {
		delete(c.n, user)
		return
	}
	c.n[user]--
}

// Limit is user's max_running, 0 for none.
func (c *runCounter) Limit(user string) int { return c.policy.Limit(user).MaxRunning }
