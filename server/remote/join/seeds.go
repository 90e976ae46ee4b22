package join

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/automanaged"
	"github.com/asynkron/protoactor-go/remote"
)

// healthTimeout bounds one question to a seed's health endpoint: the
// timeout of protoactor's automanaged provider.
const healthTimeout = 2 * time.Second

// answering asks every seed of cfg at once which member answers there,
// and returns the members of cfg's cluster that answered, in the order
// of the seeds.
func answering(ctx context.Context, client *http.Client, cfg Config) []*automanaged.NodeModel {
	nodes := make([]*automanaged.NodeModel, len(cfg.Seeds))
	var wg sync.WaitGroup
	for i, seed := range cfg.Seeds {
		wg.Go(func() { nodes[i] = health(ctx, client, seed) })
	}
	wg.Wait()
	out := nodes[:0]
	for _, n := range nodes {
		if n != nil && n.ClusterName == cfg.Name {
			out = append(out, n)
		}
	}
	return out
}

// health asks the automanaged endpoint at seed which member it is; nil
// when it does not answer in time.
func health(ctx context.Context, client *http.Client, seed string) *automanaged.NodeModel {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+seed+"/_health", nil)
	if err != nil {
		return nil
	}
	res, err := client.Do(req)
	if err != nil {
		return nil
	}
	defer res.Body.Close()
	var node automanaged.NodeModel
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&node) != nil {
		return nil
	}
	return &node
}

// A client of an automanaged cluster finds the members as protoactor's
// automanaged provider does — it asks every seed's health endpoint, every
// Refresh — but through seedPoller, not protoactor's member list. That
// list blocks for good every member that leaves its view: a single poll
// that timed out (a stalled client, a slow member) would keep a live
// member out of the client's view for ever, and the sessions that hash to
// it unreachable, since the members, which still see it, answer the
// client's requests for them elsewhere with a dead letter. A client hosts
// and owns nothing, so with seedPoller a member that answers again simply
// comes back into its view. Members keep protoactor's provider (its
// blocking is what their gossip agrees on) and tell a member they dropped
// to rejoin (WatchBlocked).

// seedPoller is the cluster provider of a client of an automanaged
// cluster: it publishes the members that answer at the seeds as a
// cluster.ClusterTopology on the actor system's event stream (which Watch
// and protoactor's PID cache follow) each time they change, and a
// remote.EndpointTerminatedEvent for each member that left, as
// protoactor's member list does.
type seedPoller struct {
	cfg     Config
	refresh time.Duration
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// StartMember refuses: members use protoactor's own provider.
func (p *seedPoller) StartMember(*cluster.Cluster) error {
	return errors.New("join: the seed poller is a cluster client's provider")
}

// StartClient polls the seeds once, publishes what answered, and goes on
// polling every refresh until Shutdown.
func (p *seedPoller) StartClient(c *cluster.Cluster) error {
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	client := &http.Client{Timeout: healthTimeout}
	view := cluster.NewMemberSet(nil)
	view = p.publish(c, view, p.poll(ctx, client))
	p.wg.Go(func() {
		defer client.CloseIdleConnections()
		t := time.NewTicker(p.refresh)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			view = p.publish(c, view, p.poll(ctx, client))
		}
	})
	return nil
}

// Shutdown stops polling.
func (p *seedPoller) Shutdown(bool) error {
	if p.stop != nil {
		p.stop()
		p.wg.Wait()
	}
	return nil
}

// poll is the members that answer at the seeds now.
func (p *seedPoller) poll(ctx context.Context, client *http.Client) *cluster.MemberSet {
	var members cluster.Members
	for _, n := range answering(ctx, client, p.cfg) {
		members = append(members, &cluster.Member{Id: n.ID, Host: n.Address, Port: int32(n.Port), Kinds: n.Kinds})
	}
	return cluster.NewMemberSet(members)
}

// publish tells c's event stream of the change from view to now, if any,
// and returns now.
func (p *seedPoller) publish(c *cluster.Cluster, view, now *cluster.MemberSet) *cluster.MemberSet {
	if now.Equals(view) {
		return view
	}
	left := view.Except(now)
	events := c.ActorSystem.EventStream
	events.Publish(&cluster.ClusterTopology{TopologyHash: now.TopologyHash(), Members: now.Members(),
		Joined: now.Except(view).Members(), Left: left.Members()})
	for _, m := range left.Members() {
		events.Publish(&remote.EndpointTerminatedEvent{Address: m.Address()})
	}
	return now
}
