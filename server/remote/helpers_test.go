package remote_test

import (
	"bufio"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/tacknode"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// wait bounds every wait of these tests.
const wait = tacknode.Wait

// startNode runs tack node on a free loopback port with args after
// --listen; it is stopped (SIGTERM) when the test ends.
func startNode(t testing.TB, args ...string) *tacknode.Node {
	t.Helper()
	return tacknode.Start(t, tackBin, args...)
}

// client is another actor system, with a remote endpoint of its own.
// One process holds one: protoactor's remote.Start sets gRPC's global
// logger, racing with the gRPC goroutines of a remote started before, so
// the tests share one client (shared) and play other processes with the
// example program (examples/remote).
type client struct {
	sys    *actor.ActorSystem
	remote *remote.Remote
	node   string
}

var (
	sharedOnce sync.Once
	sharedSys  *actor.ActorSystem
	sharedRem  *remote.Remote
)

// newClient is the test process's actor system, talking to the node at
// nodeAddr.
func newClient(t testing.TB, nodeAddr string) *client {
	t.Helper()
	sharedOnce.Do(func() {
		sharedSys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return slog.New(slog.DiscardHandler)
		}), actor.WithDeadLetterThrottleInterval(10*time.Millisecond))
		sharedRem = remote.NewRemote(sharedSys, remote.Configure("127.0.0.1", 0))
		sharedRem.Start()
	})
	return &client{sys: sharedSys, remote: sharedRem, node: nodeAddr}
}

// closeShared shuts the shared client down, if it was started.
func closeShared() {
	if sharedRem != nil {
		sharedRem.Shutdown(true)
		sharedSys.Shutdown()
	}
}

// request sends msg to pid and waits for the answer.
func (c *client) request(t testing.TB, pid *actor.PID, msg any) any {
	t.Helper()
	res, err := c.sys.Root.RequestFuture(pid, msg, wait).Result()
	if err != nil {
		t.Fatalf("%T to %s: %v", msg, pid, err)
	}
	return res
}

// reply sends msg to pid and wants an events/v1 Reply without error.
func (c *client) reply(t testing.TB, pid *actor.PID, msg any) *eventsv1.Reply {
	t.Helper()
	r, ok := c.request(t, pid, msg).(*eventsv1.Reply)
	if !ok {
		t.Fatalf("%T answered with %T", msg, r)
	}
	if r.Error != nil {
		t.Fatalf("%T: %v", msg, r.Error)
	}
	return r
}

// create makes a session on the node and returns its PID.
func (c *client) create(t testing.TB, id, script string, plugins ...*eventsv1.PluginConfig) *actor.PID {
	t.Helper()
	r := c.reply(t, remotev1.GatewayPID(c.node), &eventsv1.CreateSession{Session: id, Script: &eventsv1.RawJSON{Json: []byte(script)}, Plugins: plugins})
	if got := r.GetCreated().GetSession(); got != id {
		t.Fatalf("created %q, want %q", got, id)
	}
	return remotev1.SessionPID(c.node, id)
}

// sink is a subscriber actor of the client: what it is sent arrives on C.
type sink struct {
	pid *actor.PID
	c   chan *eventsv1.Event
}

// subscribe spawns a subscriber and subscribes it to the session at pid;
// it stops when the test ends.
func (c *client) subscribe(t testing.TB, session *actor.PID, since uint64, types ...string) *sink {
	t.Helper()
	s := &sink{c: make(chan *eventsv1.Event, 4096)}
	s.pid = c.sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if ev, ok := ctx.Message().(*eventsv1.Event); ok {
			s.c <- ev
		}
	}))
	t.Cleanup(func() { _ = c.sys.Root.StopFuture(s.pid).Wait() })
	c.reply(t, session, &remotev1.Subscribe{Subscriber: s.pid, Since: since, Types: types})
	return s
}

// follower is the example program subscribed to a session: a subscriber
// in another process.
type follower struct {
	cmd   *exec.Cmd
	lines chan string
}

// follow starts the example program subscribed to session on the node;
// it returns once the program has subscribed.
func follow(t testing.TB, nodeAddr, session string) *follower {
	t.Helper()
	f := &follower{cmd: exec.Command(exampleBin(t), "-node", nodeAddr, "-session", session, "-follow"), lines: make(chan string, 4096)}
	out, err := f.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.kill)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
		close(f.lines)
	}()
	if l := f.line(t); !strings.HasPrefix(l, "subscribed") {
		t.Fatalf("follower said %q", l)
	}
	return f
}

// line waits for the follower's next output line.
func (f *follower) line(t testing.TB) string {
	t.Helper()
	select {
	case l, ok := <-f.lines:
		if !ok {
			t.Fatal("the follower exited")
		}
		return l
	case <-time.After(wait):
		t.Fatal("the follower printed nothing")
		return ""
	}
}

// kill kills the follower's process.
func (f *follower) kill() {
	if f.cmd.ProcessState == nil {
		_ = f.cmd.Process.Kill()
		_ = f.cmd.Wait()
	}
}

// next waits for the sink's next event.
func (s *sink) next(t testing.TB) *eventsv1.Event {
	t.Helper()
	select {
	case ev := <-s.c:
		return ev
	case <-time.After(wait):
		t.Fatal("no event")
		return nil
	}
}

// until collects events up to and including the first of type name.
func (s *sink) until(t testing.TB, name string) []*eventsv1.Event {
	t.Helper()
	var out []*eventsv1.Event
	for {
		ev := s.next(t)
		out = append(out, ev)
		if events.Type(ev) == name {
			return out
		}
	}
}

// typesOf names events.
func typesOf(evs []*eventsv1.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = events.Type(ev)
	}
	return out
}

// wantTypes compares event names exactly.
func wantTypes(t testing.TB, got []*eventsv1.Event, want ...string) {
	t.Helper()
	if g := typesOf(got); !slices.Equal(g, want) {
		t.Fatalf("events\n got %q\nwant %q\n(the events got: %v)", g, want, got)
	}
}

// consecutive checks that seqs go up by one from first.
func consecutive(t testing.TB, evs []*eventsv1.Event, first uint64) {
	t.Helper()
	for i, ev := range evs {
		if ev.Seq != first+uint64(i) {
			t.Fatalf("event %d (%s) has seq %d, want %d", i, events.Type(ev), ev.Seq, first+uint64(i))
		}
	}
}

// state asks a session's get_state.
func (c *client) state(t testing.TB, session *actor.PID) *eventsv1.SessionState {
	t.Helper()
	return c.reply(t, session, &eventsv1.GetState{}).GetState()
}

// listLoaded reports whether the node lists session id as loaded.
func (c *client) listLoaded(t testing.TB, id string) bool {
	t.Helper()
	for _, s := range c.reply(t, remotev1.GatewayPID(c.node), &eventsv1.ListSessions{}).GetSessions().GetSessions() {
		if s.Session == id {
			return s.Loaded
		}
	}
	t.Fatalf("session %s not listed", id)
	return false
}

// unknownMessage is a protobuf message of a type no tack node knows.
func unknownMessage(t testing.TB) proto.Message {
	t.Helper()
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("unknown_test.proto"), Package: proto.String("tack.test"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Unknown")}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewMessage(fd.Messages().Get(0))
}
