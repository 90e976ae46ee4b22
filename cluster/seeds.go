package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	actorcluster "github.com/asynkron/protoactor-go/cluster"
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
	var out []*automanaged.NodeModel
	for _, a := range askSeeds(ctx, client, cfg) {
		if a.node != nil {
			out = append(out, a.node)
		}
	}
	return out
}

// seedAnswer is what a seed's health endpoint answered: the member of
// cfg's cluster there, or none; late when it did not answer in time (the
// member may be slow or stalled), not when it refused or closed the
// connection or answered something else (no member of the cluster is
// there now).
type seedAnswer struct {
	node *automanaged.NodeModel
	late bool
}

// askSeeds asks every seed of cfg at once which member answers there.
func askSeeds(ctx context.Context, client *http.Client, cfg Config) []seedAnswer {
	answers := make([]seedAnswer, len(cfg.Seeds))
	var wg sync.WaitGroup
	for i, seed := range cfg.Seeds {
		wg.Go(func() {
			n, err := health(ctx, client, seed)
			var ne net.Error
			switch {
			case err != nil:
				answers[i].late = errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
			case n.ClusterName == cfg.Name:
				answers[i].node = n
			}
		})
	}
	wg.Wait()
	return answers
}

// health asks the automanaged endpoint at seed which member it is.
func health(ctx context.Context, client *http.Client, seed string) (*automanaged.NodeModel, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+seed+"/_health", nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("health of %s: %s", seed, res.Status)
	}
	var node automanaged.NodeModel
	if err := json.NewDecoder(res.Body).Decode(&node); err != nil {
		return nil, fmt.Errorf("health of %s: %w", seed, err)
	}
	return &node, nil
}

// seedView is the members of an automanaged cluster as its seeds
// answer, polled again and again. A member whose endpoint refuses or
// closes the connection (its process is gone) leaves the view at once;
// one that does not answer in time (stalled, or slow on a busy machine)
// only once it has not answered for the TTL: protoactor's own provider
// drops a member at the first poll that times out, which on a loaded
// machine drops live members by chance.
type seedView struct {
	cfg    Config
	client *http.Client
	now    func() time.Time
	// last is the member that last answered at each seed, and when.
	last map[string]seen
}

// seen is a member that answered a poll, and when.
type seen struct {
	node *automanaged.NodeModel
	at   time.Time
}

// newSeedView is a view of cfg's members, nobody seen yet.
func newSeedView(cfg Config) *seedView {
	return &seedView{cfg: cfg, client: &http.Client{Timeout: healthTimeout}, now: time.Now, last: map[string]seen{}}
}

// poll asks the seeds again and returns the members in view, by id.
func (v *seedView) poll(ctx context.Context) []*actorcluster.Member {
	now := v.now()
	for i, a := range askSeeds(ctx, v.client, v.cfg) {
		seed := v.cfg.Seeds[i]
		switch {
		case a.node != nil:
			v.last[seed] = seen{a.node, now}
		case !a.late, now.Sub(v.last[seed].at) >= v.cfg.ttl():
			delete(v.last, seed)
		}
	}
	byID := map[string]*actorcluster.Member{}
	for _, s := range v.last {
		n := s.node
		byID[n.ID] = &actorcluster.Member{Id: n.ID, Host: n.Address, Port: int32(n.Port), Kinds: n.Kinds}
	}
	members := make([]*actorcluster.Member, 0, len(byID))
	for _, m := range byID {
		members = append(members, m)
	}
	slices.SortFunc(members, func(a, b *actorcluster.Member) int { return strings.Compare(a.Id, b.Id) })
	return members
}

// close lets go of the view's idle connections.
func (v *seedView) close() { v.client.CloseIdleConnections() }

// A client of an automanaged cluster finds the members as a member does —
// it asks every seed's health endpoint, every Refresh (seedView) — but
// through seedPoller, not protoactor's member list. That list blocks for
// good every member that leaves its view: a member that left the client's
// view alone (a stalled client, a cut link) would stay out of it for
// ever, and the sessions that hash to it unreachable, since the members,
// which still see it, answer the client's requests for them elsewhere
// with a dead letter. A client hosts and owns nothing, so with seedPoller
// a member that answers again simply comes back into its view. Members
// go through protoactor's member list (its blocking is what their gossip
// agrees on) and tell a member they dropped to rejoin (WatchBlocked).

// seedPoller is the cluster provider of a client of an automanaged
// cluster: it publishes the members that answer at the seeds as a
// actorcluster.ClusterTopology on the actor system's event stream (which Watch
// and protoactor's PID cache follow) each time they change, and a
// remote.EndpointTerminatedEvent for each member that left, as
// protoactor's member list does.
type seedPoller struct {
	cfg     Config
	refresh time.Duration
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// seedRegistry is the registry of a member of an automanaged cluster:
// the member serves its description at GET /_health on its port (on
// every interface, as protoactor's provider does, in the same JSON), and
// the members are those its seedView sees, itself always included. A
// registration here never lapses: a member the others dropped is told so
// by them (WatchBlocked).
type seedRegistry struct {
	view *seedView
	port int
	self *actorcluster.Member
	srv  *http.Server
	done chan struct{}
}

func (r *seedRegistry) register(_ context.Context, m *actorcluster.Member, _ time.Duration) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("0.0.0.0", strconv.Itoa(r.port)))
	if err != nil {
		return fmt.Errorf("the automanaged endpoint: %w", err)
	}
	body, err := json.Marshal(automanaged.NewNode(r.view.cfg.Name, m.Id, m.Host, int(m.Port), r.port, m.Kinds))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	r.self = m
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: healthTimeout}
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(ln)
	}()
	return nil
}

func (r *seedRegistry) renew(context.Context, time.Duration) error { return nil }

func (r *seedRegistry) list(ctx context.Context) ([]*actorcluster.Member, error) {
	members := r.view.poll(ctx)
	if r.self != nil && !slices.ContainsFunc(members, func(m *actorcluster.Member) bool { return m.Id == r.self.Id }) {
		members = append(members, r.self)
	}
	return members, nil
}

func (r *seedRegistry) deregister(context.Context) error {
	if r.srv == nil {
		return nil
	}
	err := r.srv.Close()
	<-r.done
	return err
}

func (r *seedRegistry) close() { r.view.close() }

// StartMember refuses: members use protoactor's own provider.
func (p *seedPoller) StartMember(*actorcluster.Cluster) error {
	return errors.New("cluster: the seed poller is a cluster client's provider")
}

// StartClient polls the seeds once, publishes what answered, and goes on
// polling every refresh until Shutdown.
func (p *seedPoller) StartClient(c *actorcluster.Cluster) error {
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	seeds := newSeedView(p.cfg)
	view := actorcluster.NewMemberSet(nil)
	view = p.publish(c, view, actorcluster.NewMemberSet(seeds.poll(ctx)))
	p.wg.Go(func() {
		defer seeds.close()
		every(ctx, p.refresh, func() bool {
			view = p.publish(c, view, actorcluster.NewMemberSet(seeds.poll(ctx)))
			return true
		})
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

// publish tells c's event stream of the change from view to now, if any,
// and returns now.
func (p *seedPoller) publish(c *actorcluster.Cluster, view, now *actorcluster.MemberSet) *actorcluster.MemberSet {
	if now.Equals(view) {
		return view
	}
	left := view.Except(now)
	events := c.ActorSystem.EventStream
	events.Publish(&actorcluster.ClusterTopology{TopologyHash: now.TopologyHash(), Members: now.Members(),
		Joined: now.Except(view).Members(), Left: left.Members()})
	for _, m := range left.Members() {
		events.Publish(&remote.EndpointTerminatedEvent{Address: m.Address()})
	}
	return now
}
