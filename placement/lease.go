package placement

import (
	"context"
	"errors"
	"time"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/store"
)

// leasePoll bounds the time between two tries at a lease another node
// holds, while the restore waits for it (Env.LeaseWait): that node may
// give it up before it expires.
const leasePoll = 250 * time.Millisecond

// leaseTimeout bounds a renewal or a release of one lease: a store that
// hangs holds up neither the renewal of the other sessions' leases nor
// Shutdown, which would otherwise wait for it as long as the connection
// lives. A lease not renewed or given up expires.
const leaseTimeout = 1500 * time.Millisecond

// acquire takes the lease of session id. While another node holds it, it
// tries again until the lease is given up or expires, for up to
// Env.LeaseWait; then the store's ErrOwned stands.
func (r *Registry) acquire(ctx context.Context, id string) error {
	deadline := time.Now().Add(r.env.LeaseWait)
	for {
		err := r.env.Store.Acquire(ctx, id, r.env.Node, leaseTTL(r.env))
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

// renew renews the leases of the loaded sessions every third of the lease
// time until Shutdown; a session whose lease another node took is unloaded
// here, so it never runs on two nodes.
func (r *Registry) renew() {
	defer r.done.Done()
	ttl := leaseTTL(r.env)
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-r.renewing.Done():
			return
		case <-tick.C:
			for _, id := range r.IDs() {
				ctx, cancel := context.WithTimeout(r.renewing, leaseTimeout)
				err := r.env.Store.Renew(ctx, id, r.env.Node, ttl)
				cancel()
				if errors.Is(err, store.ErrOwned) {
					r.unload(id)
				}
			}
		}
	}
}

// leaseTTL is how long a lease lasts: Env.LeaseTTL, or
// actors.DefaultLeaseTTL.
func leaseTTL(env *actors.Env) time.Duration {
	if env.LeaseTTL <= 0 {
		return actors.DefaultLeaseTTL
	}
	return env.LeaseTTL
}

// release gives up a session's lease; a lease another node holds is not
// ours to give up, and that failure is fine, as is one the store did not
// answer within leaseTimeout: the lease expires.
func (r *Registry) release(id string) {
	if st := r.env.Store; st != nil {
		ctx, cancel := context.WithTimeout(context.Background(), leaseTimeout)
		defer cancel()
		_ = st.Release(ctx, id, r.env.Node)
	}
}
