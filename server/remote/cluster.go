package remote

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	actorcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/remote"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/cluster"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/command"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// A cluster member's sessions are grains: protoactor's disthash names,
// by rendezvous hashing over the members, the member a session id belongs
// to; a request for it goes to that member's placement actor, which
// spawns the session's grain there on first use. The grain is a thin
// actor that hands what it is sent to the runtime of its own member
// (Node.dispatch), which restores the session from the store, taking its
// lease. The lease decides who runs a session: a member whose restore
// meets a lease another member holds waits for it to be given up or to
// expire (tack.WithLeaseWait) before it runs the session, and commands
// wait with it; a member whose lease another took unloads the session
// (the registry's renewal). When the member list changes so that a
// session belongs elsewhere, disthash stops its grain, and the grain
// releases the session (stored, lease given up) for the new member.

// requestTimeout bounds a forwarded command or a gateway request sent
// through the cluster: it covers a restore that waits out a dead
// member's lease.
const requestTimeout = time.Minute

// leaveTimeout bounds the wait for the cluster provider to shut down.
const leaveTimeout = 5 * time.Second

// join makes the node a member of the cluster cfg names, with its remote
// configured by rcfg.
func (n *Node) join(rcfg *remote.Config, cfg cluster.Config) error {
	cc, err := cfg.Cluster(rcfg, actorcluster.NewKind(SessionKind, actor.PropsFromProducer(func() actor.Actor { return &grain{node: n} })))
	if err != nil {
		return err
	}
	if err := cluster.Started(func() { n.cluster = cluster.Watch(actorcluster.New(n.sys, cc)) }); err != nil {
		return err
	}
	if f := n.onMembers; f != nil {
		n.sys.EventStream.Subscribe(func(ev any) {
			if t, ok := ev.(*actorcluster.ClusterTopology); ok {
				ids := make([]string, len(t.Members))
				for i, m := range t.Members {
					ids[i] = m.Id
				}
				slices.Sort(ids)
				f(ids)
			}
		})
	}
	if err := cluster.Started(n.cluster.StartMember); err != nil {
		// protoactor started the remote before the provider failed: free
		// the address for the next attempt.
		if n.cluster.Remote != nil {
			n.cluster.Remote.Shutdown(false)
		}
		return err
	}
	n.remote = n.cluster.Remote
	n.stopBlocked = n.cluster.WatchBlocked(cfg, func(address, id string) {
		n.log.Info("told a member this one dropped, though alive, to rejoin", zap.String("member", id), zap.String("address", address))
		n.sys.Root.Send(remotev1.GatewayPID(address), &remotev1.Rejoin{MemberId: id})
	})
	return nil
}

// leave stops the cluster provider, so the other members see this one go.
func (n *Node) leave() {
	n.stopBlocked()
	// A registry that does not answer must not keep a dropped member from
	// rejoining.
	done := make(chan struct{})
	go func() {
		_ = n.cluster.Config.ClusterProvider.Shutdown(false)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(leaveTimeout):
		n.log.Warn("the cluster provider did not shut down in time; leaving without it", zap.Duration("waited", leaveTimeout))
	}
}

// rejoin takes a Rejoin: another member dropped this one from its view.
func (n *Node) rejoin(m *remotev1.Rejoin) {
	if n.cluster == nil || m.MemberId != n.sys.ID {
		return
	}
	n.log.Info("another member dropped this one from its view", zap.String("member", m.MemberId))
	n.cluster.Drop()
}

// grain is a session's grain on the member that hosts it.
type grain struct {
	node *Node
	id   string
}

// Receive hands commands to the session here; CreateSession creates it
// under the grain's identity. When disthash stops the grain (the session
// belongs to another member now, or this one shuts down), the session is
// released for the member that takes it.
func (g *grain) Receive(ctx actor.Context) {
	n := g.node
	switch m := ctx.Message().(type) {
	case *actorcluster.ClusterInit:
		g.id = m.Identity.Identity
	case *actor.Stopping:
		if g.id != "" && n.rt.Release(g.id) {
			n.log.Info("released a session that moved to another member", zap.String("session", g.id))
		}
	case actor.SystemMessage, actor.AutoReceiveMessage:
	default:
		if !n.cluster.Owns(g.id) {
			g.stale(ctx)
			return
		}
		g.handle(ctx)
	}
}

// stale answers a grain activated on this member while the asker's view
// of the members differed from this member's, which names another owner:
// the command is not done, its sender is answered with a dead letter
// (cluster.Request then asks again, where its view now points), and the grain
// stops, so the session runs where the member list says.
func (g *grain) stale(ctx actor.Context) {
	if ctx.Sender() != nil {
		ctx.Respond(&actor.DeadLetterResponse{Target: ctx.Self()})
	}
	ctx.Stop(ctx.Self())
}

// handle hands a command to the session here.
func (g *grain) handle(ctx actor.Context) {
	n := g.node
	switch m := ctx.Message().(type) {
	case *eventsv1.CreateSession:
		g.create(ctx, m, "")
	case *remotev1.Create:
		if m.Create == nil {
			n.refuse(ctx.Sender(), "Create needs create: the CreateSession")
			return
		}
		g.create(ctx, m.Create, m.User)
	default:
		n.dispatch(g.id, m, ctx.Sender(), userIn(ctx.MessageHeader()))
	}
}

// create creates the grain's session on this member, belonging to user.
func (g *grain) create(ctx actor.Context, m *eventsv1.CreateSession, user string) {
	n := g.node
	if m.Session != "" && m.Session != g.id {
		n.refuse(ctx.Sender(), fmt.Sprintf("CreateSession for %q sent to the grain of %q", m.Session, g.id))
		return
	}
	m.Session = g.id
	env := n.env()
	env.User = user
	n.answer(ctx.Sender(), func(c context.Context) (proto.Message, error) {
		return command.RunMessage(c, env, "", m)
	})
}

// createThrough creates a session through the cluster: at the member its
// id belongs to (a new random id when m names none), whose grain creates
// it; this member gets a forwarder for it.
func (n *Node) createThrough(sender *actor.PID, m *eventsv1.CreateSession) {
	if m.Session == "" {
		m.Session = cluster.NewSessionID()
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		res, err := cluster.Request(ctx, n.cluster, m.Session, m)
		if err != nil {
			res = notAlive(err)
		} else if r, ok := res.(*eventsv1.Reply); ok && r.GetCreated() != nil {
			n.route(m.Session)
		}
		if sender != nil {
			n.sys.Root.Send(sender, res)
		}
	}()
}

// lookupThrough answers Lookup on a cluster member: the session is
// reached (restored where it belongs) with a GetState, and the PID is
// this member's forwarder to it.
func (n *Node) lookupThrough(id string) *remotev1.SessionRef {
	ref := &remotev1.SessionRef{Session: id}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	res, err := cluster.Read(ctx, n.cluster, id, &eventsv1.GetState{})
	r, _ := res.(*eventsv1.Reply)
	switch {
	case err != nil:
		ref.Error = notAlive(err).Error
	case r == nil:
		ref.Error = &eventsv1.ErrorInfo{Code: events.CodeInternal, Message: fmt.Sprintf("the session answered %T", res)}
	case r.Error != nil:
		ref.Error = r.Error
	default:
		ref.Pid = n.route(id)
	}
	return ref
}

// created is told of a session this node's runtime created for a Fork: a
// node on its own gives it a route; a cluster member releases it, stored,
// for the member it belongs to, and gives it a forwarder.
func (n *Node) created(id string) {
	if n.cluster != nil {
		n.rt.Release(id)
	}
	n.route(id)
}

// forwarder is the PID "tack/<id>" of a session on a cluster member: it
// sends what it is sent to the session's grain wherever that lives, one
// command at a time so that their order holds, and relays the answer.
type forwarder struct {
	node *Node
	id   string
}

// Receive forwards a command and relays its answer.
func (f *forwarder) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case actor.SystemMessage, actor.AutoReceiveMessage:
		return
	}
	c, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	res, err := cluster.RequestFor(c, f.node.cluster, f.id, userIn(ctx.MessageHeader()), ctx.Message())
	if ctx.Sender() == nil {
		return
	}
	if err != nil {
		res = notAlive(err)
	}
	ctx.Respond(res)
}

// notAlive is the Reply of a request no member answered.
func notAlive(err error) *eventsv1.Reply {
	return &eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: events.CodeNotAlive, Message: err.Error()}}
}
