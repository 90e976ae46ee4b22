package cluster

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// An automanaged member drops a member whose health poll fails once
// (protoactor's fixed 2 s timeout: a stall does it) and, like every
// member, never takes that member id back; the dropped member, whose own
// polls go on working, does not know. The views then differ for good. A
// member that sees at least half the seeds finds such members by asking
// the seeds itself, and tells each one that answers under an id it
// blocked to rejoin (remotev1.Rejoin).

// blockedPoll is how often a member looks for live members it blocked.
const blockedPoll = 2 * time.Second

// WatchBlocked, for a member of an automanaged cluster, polls every
// seed's health endpoint every blockedPoll until stop is called (while it
// sees at least half of the seeds as members), and calls tell with the
// remote address and member id of each member that answers though c has
// blocked it. For etcd and postgres it does nothing: a member whose
// registration lapsed finds it out at its next renewal.
func (c *Cluster) WatchBlocked(cfg Config, tell func(address, id string)) (stop func()) {
	if cfg.Provider != "" && cfg.Provider != Automanaged {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	client := &http.Client{Timeout: healthTimeout}
	var wg sync.WaitGroup
	wg.Go(func() {
		every(ctx, blockedPoll, func() bool {
			if c.Members()*2 < len(cfg.Seeds) {
				// A member that sees fewer than half the seeds may be the
				// one that stalled (its own polls timed out): it leaves
				// the telling to the others.
				return true
			}
			for _, node := range answering(ctx, client, cfg) {
				if c.Remote.BlockList().IsBlocked(node.ID) {
					tell(net.JoinHostPort(node.Address, strconv.Itoa(node.Port)), node.ID)
				}
			}
			return true
		})
	})
	return func() {
		cancel()
		wg.Wait()
		client.CloseIdleConnections()
	}
}
