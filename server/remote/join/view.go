package join

import (
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
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
	*cluster.Cluster

	mu      sync.Mutex
	rdv     *cluster.Rendezvous
	members int
}

// Watch follows c's member list, from its first change: call it before
// starting c (StartMember or StartClient).
func Watch(c *cluster.Cluster) *Cluster {
	w := &Cluster{Cluster: c, rdv: cluster.NewRendezvous()}
	c.ActorSystem.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*cluster.ClusterTopology); ok {
			rdv := cluster.NewRendezvous()
			rdv.UpdateMembers(t.Members)
			w.mu.Lock()
			w.rdv, w.members = rdv, len(t.Members)
			w.mu.Unlock()
		}
	})
	return w
}

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
	return rdv.GetByClusterIdentity(cluster.NewClusterIdentity(id, remotev1.SessionKind))
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
		&cluster.ActivationRequest{ClusterIdentity: cluster.NewClusterIdentity(id, remotev1.SessionKind)}, activationTimeout).Result()
	r, ok := res.(*cluster.ActivationResponse)
	if err != nil || !ok || r.Pid == nil {
		return nil
	}
	c.PidCache.Set(id, remotev1.SessionKind, r.Pid)
	return r.Pid
}
