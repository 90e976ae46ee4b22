package cluster

import (
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	actorcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"

	"github.com/tack-run/tack/server/remote/remotev1"
)

// activationTimeout bounds the question "where is this session's grain?"
// put to the member that rendezvous hashing names. protoactor's own
// lookup waits 5 s for a member that may have died a moment ago; this one
// gives up sooner and asks again once the member list has changed.
const activationTimeout = time.Second

// Cluster is a protoactor cluster joined as a member or a client, with
// the view of its members that finding sessions needs.
type Cluster struct {
	*actorcluster.Cluster

	mu      sync.Mutex
	rdv     *actorcluster.Rendezvous
	members int
	// listed: this member has been in its own view of the members.
	listed bool
	// gone: this member was dropped, and dropped is closed.
	gone    bool
	dropped chan struct{}
}

// Watch follows c's member list, from its first change: call it before
// starting c (StartMember or StartClient).
func Watch(c *actorcluster.Cluster) *Cluster {
	w := &Cluster{Cluster: c, rdv: actorcluster.NewRendezvous(), dropped: make(chan struct{})}
	c.ActorSystem.EventStream.Subscribe(func(ev any) {
		switch t := ev.(type) {
		case *actorcluster.ClusterTopology:
			w.update(t.Members)
		case *lapsed:
			w.Drop()
		}
	})
	return w
}

// update takes a new member list.
func (c *Cluster) update(members []*actorcluster.Member) {
	rdv := actorcluster.NewRendezvous()
	rdv.UpdateMembers(members)
	self := slices.ContainsFunc(members, func(m *actorcluster.Member) bool { return m.Address() == c.ActorSystem.Address() })
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rdv, c.members = rdv, len(members)
	switch {
	case self:
		c.listed = true
	case c.listed:
		c.drop()
	}
}

// Drop marks this member dropped, as when it finds itself left out of its
// own view: another member told it that it was dropped from theirs
// (remotev1.Rejoin).
func (c *Cluster) Drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop()
}

// drop closes dropped once; c.mu is held.
func (c *Cluster) drop() {
	if !c.gone {
		c.gone = true
		close(c.dropped)
	}
}

// Dropped is closed when this member, once listed among the members,
// finds itself left out, or its etcd or postgres registration lapsed (it
// stalled, or could not reach the registry, for the registration's TTL),
// or another member tells it that it was dropped from theirs (Drop). protoactor
// never takes a member back under the identity it had, so the member
// serves nothing from then on; it should leave and join again as a new
// actor system. A client is never dropped.
func (c *Cluster) Dropped() <-chan struct{} { return c.dropped }

// Members counts the members c knows of.
func (c *Cluster) Members() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.members
}

// owner is the address of the member session id belongs to ("" when
// there is none).
func (c *Cluster) owner(id string) string {
	c.mu.Lock()
	rdv := c.rdv
	c.mu.Unlock()
	return rdv.GetByClusterIdentity(actorcluster.NewClusterIdentity(id, remotev1.SessionKind))
}

// Owns reports whether session id belongs to this member by its own view
// of the members.
func (c *Cluster) Owns(id string) bool {
	return c.owner(id) == c.ActorSystem.Address()
}

// Grain is the PID of session id's grain: from c's cache, else asked of
// the member rendezvous hashing names (whose disthash placement actor
// activates it there); nil when none answers in time.
func Grain(c *Cluster, id string) *actor.PID {
	if pid, ok := c.PidCache.Get(id, remotev1.SessionKind); ok {
		return pid
	}
	addr := c.owner(id)
	if addr == "" {
		return nil
	}
	res, err := c.ActorSystem.Root.RequestFuture(actor.NewPID(addr, disthash.PartitionActivatorActorName),
		&actorcluster.ActivationRequest{ClusterIdentity: actorcluster.NewClusterIdentity(id, remotev1.SessionKind)}, activationTimeout).Result()
	r, ok := res.(*actorcluster.ActivationResponse)
	if err != nil || !ok || r.Pid == nil {
		return nil
	}
	c.PidCache.Set(id, remotev1.SessionKind, r.Pid)
	return r.Pid
}
