package cluster

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	actorcluster "github.com/asynkron/protoactor-go/cluster"
)

// The etcd and postgres providers are this package's own, one provider
// over two registries. A member registers itself under its actor
// system's id with a registration that lapses unless renewed within TTL;
// every Refresh each member renews its own and every member and client
// lists the live registrations, which is its view of the actorcluster. The
// registry alone decides that a registration lapsed — etcd revokes the
// lease, PostgreSQL's clock passes the row's expiry — and a lapsed
// registration is never renewed: the member learns it was dropped at its
// next renewal (or when it could not renew for TTL, since the others have
// dropped it by then) and leaves, to join again as a new member. So a
// member is never kept out of a view it believes it is in, and every
// view is the registry's list, read again from scratch each time: no
// watch whose missed events would leave views apart.
//
// protoactor's own etcd provider did neither: it re-registered a member
// whose lease lapsed under the same id (which the others had blocked for
// good), and restarted its watch after an error without the revision it
// had reached, so the changes made while etcd stalled never reached it.

// registry is where the members register: etcd or PostgreSQL.
type registry interface {
	// register adds m with a registration that lapses after ttl.
	register(ctx context.Context, m *actorcluster.Member, ttl time.Duration) error
	// renew extends the registration for ttl more; errLapsed when it
	// lapsed (or was removed) first.
	renew(ctx context.Context, ttl time.Duration) error
	// list is the members whose registration has not lapsed.
	list(ctx context.Context) ([]*actorcluster.Member, error)
	// deregister removes the registration.
	deregister(ctx context.Context) error
	// close lets go of the registry's connections.
	close()
}

// errLapsed: the member's registration lapsed before it was renewed.
var errLapsed = errors.New("the member's registration lapsed")

// lapsed is published on a member's event stream when its registration
// lapsed: the others have dropped it (Watch takes it).
type lapsed struct{}

// leased is the cluster provider over a registry.
type leased struct {
	reg     registry
	ttl     time.Duration
	refresh time.Duration

	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
	member bool
}

// StartMember registers the member, publishes the members listed, and
// goes on renewing and listing every refresh until Shutdown.
func (p *leased) StartMember(c *actorcluster.Cluster) error {
	host, port, err := c.ActorSystem.GetHostPort()
	if err != nil {
		return err
	}
	self := &actorcluster.Member{Id: c.ActorSystem.ID, Host: host, Port: int32(port), Kinds: c.GetClusterKinds()}
	started := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), p.ttl)
	err = p.reg.register(ctx, self, p.ttl)
	cancel()
	if err != nil {
		return err
	}
	p.member = true
	if err := p.start(c, started); err != nil {
		// Not left registered (nor, for automanaged, serving) when the
		// member does not start.
		ctx, cancel := context.WithTimeout(context.Background(), p.ttl)
		defer cancel()
		_ = p.reg.deregister(ctx)
		p.reg.close()
		return err
	}
	return nil
}

// StartClient publishes the members listed, and goes on listing every
// refresh until Shutdown.
func (p *leased) StartClient(c *actorcluster.Cluster) error {
	return p.start(c, time.Time{})
}

// start lists the members once, then every refresh; renewed is when the
// member's last registration or renewal that succeeded was sent (zero
// for a client).
func (p *leased) start(c *actorcluster.Cluster, renewed time.Time) error {
	ctx, cancel := context.WithCancel(context.Background())
	p.mu.Lock()
	p.cancel = cancel
	p.mu.Unlock()
	if err := p.list(ctx, c); err != nil {
		cancel()
		p.mu.Lock()
		p.cancel = nil
		p.mu.Unlock()
		return err
	}
	// Renewing and listing run apart, so that a slow list (an
	// automanaged member that does not answer takes a health timeout)
	// never delays a renewal.
	if p.member {
		p.wg.Go(func() {
			every(ctx, p.refresh, func() bool {
				sent := time.Now()
				switch err := p.renew(ctx, renewed); {
				case err == nil:
					renewed = sent
				case errors.Is(err, errLapsed):
					c.Logger().Warn("the member's registration lapsed: it was dropped", slog.Any("error", err))
					c.ActorSystem.EventStream.Publish(&lapsed{})
					return false
				case ctx.Err() != nil:
					return false
				default:
					c.Logger().Warn("could not renew the member's registration", slog.Any("error", err))
				}
				return true
			})
		})
	}
	p.wg.Go(func() {
		every(ctx, p.refresh, func() bool {
			if err := p.list(ctx, c); err != nil && ctx.Err() == nil {
				c.Logger().Warn("could not list the members", slog.Any("error", err))
			}
			return true
		})
	})
	return nil
}

// every calls f every d until ctx is done or f returns false.
func every(ctx context.Context, d time.Duration, f func() bool) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !f() {
			return
		}
	}
}

// renew renews the member's registration, last renewed at renewed. Once
// TTL has passed since then without a renewal, it has lapsed for the
// others whatever the registry answers now.
func (p *leased) renew(ctx context.Context, renewed time.Time) error {
	left := time.Until(renewed.Add(p.ttl))
	if left <= 0 {
		return errLapsed
	}
	ctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	err := p.reg.renew(ctx, p.ttl)
	if err != nil && time.Now().After(renewed.Add(p.ttl)) {
		return errors.Join(errLapsed, err)
	}
	return err
}

// list publishes the members the registry lists now (protoactor's member
// list tells the cluster what changed, if anything).
func (p *leased) list(ctx context.Context, c *actorcluster.Cluster) error {
	ctx, cancel := context.WithTimeout(ctx, max(p.refresh, healthTimeout))
	defer cancel()
	members, err := p.reg.list(ctx)
	if err != nil {
		return err
	}
	c.MemberList.UpdateClusterTopology(members)
	return nil
}

// Shutdown stops renewing and listing and removes the member's
// registration.
func (p *leased) Shutdown(bool) error {
	p.mu.Lock()
	cancel := p.cancel
	p.cancel = nil
	p.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	p.wg.Wait()
	defer p.reg.close()
	if !p.member {
		return nil
	}
	ctx, stop := context.WithTimeout(context.Background(), p.ttl)
	defer stop()
	return p.reg.deregister(ctx)
}
