package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/cluster"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/hosting"
	"github.com/tack-run/tack/server/command"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// SessionKind is the kind a caller spawns by (remote.SpawnNamed) to get
// the PID of the session named by the spawn's name: an existing one
// (restored if stored), else a new one on the node's default model. In a
// cluster it is the kind of the sessions' grains.
const SessionKind = remotev1.SessionKind

// Node is a runtime served over protoactor remote, alone (Start) or as a
// member of a cluster (StartMember).
type Node struct {
	rt *tack.Runtime
	// host is what rt lends the node beyond its public API: delivery to
	// a session by id.
	host hosting.Host
	// sys is the actor system of rt's sessions, which the node's remote,
	// gateway and routes join.
	sys     *actor.ActorSystem
	remote  *remote.Remote
	log     *zap.Logger
	gateway *actor.PID
	// cluster is the cluster the node is a member of; nil for a node on
	// its own.
	cluster   *cluster.Cluster
	onMembers func([]string)
	// stopBlocked stops a member's watch for members it dropped though
	// alive (cluster.Cluster.WatchBlocked).
	stopBlocked func()

	mu     sync.Mutex
	routes map[string]*actor.PID
}

// Option configures a Node.
type Option func(*options)

type options struct {
	log       *zap.Logger
	config    []remote.ConfigOption
	onMembers func([]string)
}

// WithLogger logs what goes wrong (a message that could not be read, a
// command that failed to start); nil logs nothing.
func WithLogger(l *zap.Logger) Option { return func(o *options) { o.log = l } }

// WithRemoteOptions passes options to protoactor's remote: gRPC server and
// dial options (TLS credentials), an advertised host, queue sizes. See
// docs/remote.md.
func WithRemoteOptions(opts ...remote.ConfigOption) Option {
	return func(o *options) { o.config = append(o.config, opts...) }
}

// WithMembers has a cluster member call f with the ids of the members,
// sorted, each time its view of the cluster changes, from the first; f
// runs on protoactor's event stream goroutine and must be quick.
func WithMembers(f func(members []string)) Option { return func(o *options) { o.onMembers = f } }

// Start serves rt's sessions at address (HOST:PORT; port 0 picks a free
// one, Address tells which). The runtime's actor system must have no
// remote yet.
func Start(rt *tack.Runtime, address string, opts ...Option) (*Node, error) {
	return start(rt, address, nil, opts...)
}

// StartMember serves rt's sessions as a member of the cluster cfg names,
// with its remote at address: each session is a grain of kind SessionKind
// whose identity is the session id, activated on the member disthash
// names (see cluster.go). rt must keep its sessions in a store every
// member shares, with a lease wait (tack.WithLeaseWait). The runtime's
// actor system must have no remote yet.
func StartMember(rt *tack.Runtime, address string, cfg cluster.Config, opts ...Option) (*Node, error) {
	return start(rt, address, &cfg, opts...)
}

func start(rt *tack.Runtime, address string, member *cluster.Config, opts ...Option) (*Node, error) {
	o := &options{log: zap.NewNop()}
	for _, f := range opts {
		f(o)
	}
	if o.log == nil {
		o.log = zap.NewNop()
	}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", address, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("listen address %q: the port must be a number from 0 to 65535", address)
	}
	// protoactor's Start panics when it cannot listen: try first, and say why.
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		port = ln.Addr().(*net.TCPAddr).Port
	}
	ln.Close()

	h := hosting.Of(rt)
	n := &Node{rt: rt, host: h, sys: h.System(), log: o.log, routes: map[string]*actor.PID{}, onMembers: o.onMembers}
	cfg := remote.Configure(host, port, o.config...)
	cfg.ServerOptions = append(cfg.ServerOptions, grpc.ChainStreamInterceptor(n.recoverStream))
	if member == nil {
		remote.WithKinds(remote.NewKind(SessionKind, n.kindProps()))(cfg)
		n.remote = remote.NewRemote(n.sys, cfg)
		if err := cluster.Started(n.remote.Start); err != nil {
			return nil, err
		}
	} else if err := n.join(cfg, *member); err != nil {
		return nil, err
	}
	n.gateway, err = n.sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return &gateway{node: n} }), remotev1.GatewayName)
	if err != nil {
		n.remote.Shutdown(false)
		return nil, fmt.Errorf("spawning the gateway: %w", err)
	}
	return n, nil
}

// Dropped is closed when the cluster drops this member (see
// cluster.Cluster.Dropped): it serves nothing from then on, and its owner
// closes it and joins again with a new runtime. nil, never closed, for a
// node on its own.
func (n *Node) Dropped() <-chan struct{} {
	if n.cluster == nil {
		return nil
	}
	return n.cluster.Dropped()
}

// ID is the node's member id in its cluster: its actor system's, new
// each time the member joins.
func (n *Node) ID() string { return n.sys.ID }

// Address is where the node listens, as callers name it in PIDs.
func (n *Node) Address() string { return n.sys.Address() }

// Close stops the gateway and the remote endpoint at once (connected
// callers see their endpoint terminate); the runtime stays up, for its
// owner to close, which gives up its sessions' leases. A cluster member
// also stops its provider, so the others see it leave; protoactor's
// gossip and lookup goroutines stay until the process exits.
func (n *Node) Close() {
	_ = n.sys.Root.StopFuture(n.gateway).Wait()
	n.mu.Lock()
	for id, pid := range n.routes {
		n.drop(pid)
		delete(n.routes, id)
	}
	n.mu.Unlock()
	if n.cluster != nil {
		n.leave()
	}
	n.remote.Shutdown(false)
}

// route returns the PID of session id's commands, registering it first:
// a route to the session here, or in a cluster a forwarder to its grain.
func (n *Node) route(id string) *actor.PID {
	n.mu.Lock()
	defer n.mu.Unlock()
	if pid, ok := n.routes[id]; ok {
		return pid
	}
	name := remotev1.GatewayName + "/" + id
	var pid *actor.PID
	if n.cluster != nil {
		pid, _ = n.sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return &forwarder{node: n, id: id} }), name)
	} else {
		pid, _ = n.sys.ProcessRegistry.Add(&route{node: n, id: id}, name)
	}
	n.routes[id] = pid
	return pid
}

// unroute forgets the PID of a closed session.
func (n *Node) unroute(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if pid, ok := n.routes[id]; ok {
		n.drop(pid)
		delete(n.routes, id)
	}
}

// drop takes a route or a forwarder out of the actor system.
func (n *Node) drop(pid *actor.PID) {
	if n.cluster != nil {
		n.sys.Root.Stop(pid)
	} else {
		n.sys.ProcessRegistry.Remove(pid)
	}
}

// recoverStream keeps a panic in protoactor's endpoint reader — it
// panics on a message whose type this process does not know — from taking
// the node down: the caller's connection is closed instead, and the node
// goes on serving.
func (n *Node) recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			n.log.Warn("dropped a remote connection that sent what the node cannot read", zap.Any("panic", p))
			err = status.Errorf(codes.InvalidArgument, "tack node: cannot read the message: %v", p)
		}
	}()
	return handler(srv, ss)
}

// answer runs a command that needs the runtime on a goroutine of its own
// and sends its Reply to sender (nil: nobody asked).
func (n *Node) answer(sender *actor.PID, run func(ctx context.Context) (proto.Message, error)) {
	go func() {
		data, err := run(context.Background())
		if sender != nil {
			n.sys.Root.Send(sender, replyOf(data, err))
		}
	}()
}

// replyOf is the Reply of a command's data or error.
func replyOf(data proto.Message, err error) *eventsv1.Reply {
	if err != nil {
		var e *tack.Error
		if errors.As(err, &e) {
			return &eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: e.Code, Message: e.Message}}
		}
		return &eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: tack.Code(err), Message: err.Error()}}
	}
	r := &eventsv1.Reply{}
	switch d := data.(type) {
	case *eventsv1.Created:
		r.Data = &eventsv1.Reply_Created{Created: d}
	case *eventsv1.SessionList:
		r.Data = &eventsv1.Reply_Sessions{Sessions: d}
	case *eventsv1.SessionExport:
		r.Data = &eventsv1.Reply_Export{Export: d}
	}
	return r
}

// env is what the node's commands run with: no user, so list_sessions
// lists every session.
func (n *Node) env() command.Env { return command.Env{Runtime: n.rt} }
