package join_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/tacknode"
	"github.com/tack-run/tack/server/remote/join"
	"github.com/tack-run/tack/server/remote/remotev1"
	"github.com/tack-run/tack/store/postgres/pgtest"
)

// wait bounds the waits of these tests that involve no dead member.
const wait = tacknode.Wait

// leaseTTL is the members' --lease-ttl: short, so a dead member's
// sessions come back soon.
const leaseTTL = "2s"

// testCluster is three tack node members on one PostgreSQL schema.
type testCluster struct {
	dsn string
	// provider is the cluster flags of member i.
	provider func(i int) []string
	mu       sync.Mutex
	members  [3]*tacknode.Node
}

// member is member i as it runs now.
func (tc *testCluster) member(i int) *tacknode.Node {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.members[i]
}

// startCluster starts three members with the automanaged provider and
// waits until they and the client see each other.
func startCluster(t *testing.T) *testCluster {
	t.Helper()
	seeds := make([]string, len(ports))
	for j, p := range ports {
		seeds[j] = net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	}
	tc := startMembers(t, func(i int) []string {
		return []string{"--cluster-seeds", strings.Join(seeds, ","), "--cluster-port", strconv.Itoa(ports[i]), "--cluster-refresh", refresh.String()}
	})
	waitMembers(t, 3)
	return tc
}

// startMembers starts three members whose cluster flags are provider's,
// and waits until they see each other.
func startMembers(t *testing.T, provider func(i int) []string) *testCluster {
	t.Helper()
	tc := &testCluster{dsn: pgtest.DSN(t), provider: provider}
	for i := range tc.members {
		tc.start(t, i)
	}
	for _, m := range tc.members {
		m.WaitLog(t, "cluster "+clusterName+" has 3 members")
	}
	return tc
}

// start starts member i (again).
func (tc *testCluster) start(t *testing.T, i int) *tacknode.Node {
	t.Helper()
	m := tacknode.Start(t, tackBin, append([]string{"--store", tc.dsn, "--cluster", clusterName,
		"--lease-ttl", leaseTTL, "--passivate-after", "0", "-v"}, tc.provider(i)...)...)
	tc.mu.Lock()
	tc.members[i] = m
	tc.mu.Unlock()
	return m
}

// host is the index of the member whose grain hosts session id.
func (tc *testCluster) host(t *testing.T, id string) int {
	t.Helper()
	pid := join.Grain(client, id)
	if pid == nil {
		t.Fatalf("no grain for %s", id)
	}
	for i := range tc.members {
		if tc.member(i).Addr == pid.Address {
			return i
		}
	}
	t.Fatalf("grain %s is on no member", pid)
	return -1
}

// waitMembers waits until the client sees n members.
func waitMembers(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(wait); client.Members() != n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the client sees %d members, want %d", client.Members(), n)
		}
	}
}

// sessionID is a fresh session id.
func sessionID(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// request sends msg to pid from the client's actor system and wants an
// events/v1 Reply without error.
func request(t *testing.T, pid *actor.PID, msg any) *eventsv1.Reply {
	t.Helper()
	res, err := sys.Root.RequestFuture(pid, msg, time.Minute).Result()
	if err != nil {
		t.Fatalf("%T to %s: %v", msg, pid, err)
	}
	r, ok := res.(*eventsv1.Reply)
	if !ok || r.Error != nil {
		t.Fatalf("%T to %s answered %T %v", msg, pid, res, res)
	}
	return r
}

// lookup asks member m's gateway for session id's PID there.
func lookup(t *testing.T, m *tacknode.Node, id string) *actor.PID {
	t.Helper()
	res, err := sys.Root.RequestFuture(remotev1.GatewayPID(m.Addr), &remotev1.Lookup{Session: id}, time.Minute).Result()
	ref, ok := res.(*remotev1.SessionRef)
	if err != nil || !ok || ref.Error != nil {
		t.Fatalf("lookup of %s at %s: %v %v", id, m.Addr, res, err)
	}
	if !ref.Pid.Equal(remotev1.SessionPID(m.Addr, id)) {
		t.Fatalf("lookup of %s at %s answered %s", id, m.Addr, ref.Pid)
	}
	return ref.Pid
}

// history is a session's working history as role:content lines.
func history(r *eventsv1.Reply) []string {
	var out []string
	for _, m := range r.GetMessages().GetMessages() {
		out = append(out, m.Role+":"+m.Content)
	}
	return out
}

// recorder is a Follow handler that keeps every event.
type recorder struct {
	mu  sync.Mutex
	evs []*eventsv1.Event
	c   chan *eventsv1.Event
}

func newRecorder() *recorder { return &recorder{c: make(chan *eventsv1.Event, 1<<14)} }

func (r *recorder) handle(ev *eventsv1.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
	r.c <- ev
}

// follow subscribes a recorder to session id through the cluster; it is
// stopped when the test ends.
func follow(t *testing.T, id string, since uint64) *recorder {
	t.Helper()
	r := newRecorder()
	pid, err := join.Follow(client, id, since, nil, r.handle)
	if err != nil {
		t.Fatalf("follow %s: %v", id, err)
	}
	t.Cleanup(func() { _ = sys.Root.StopFuture(pid).Wait() })
	return r
}

// until collects events up to and including the first of type name,
// waiting up to d.
func (r *recorder) until(t *testing.T, name string, d time.Duration) []*eventsv1.Event {
	t.Helper()
	var out []*eventsv1.Event
	timeout := time.After(d)
	for {
		select {
		case ev := <-r.c:
			out = append(out, ev)
			if events.Type(ev) == name {
				return out
			}
		case <-timeout:
			t.Fatalf("no %s within %v; got %q", name, d, typesOf(out))
		}
	}
}

// all is every event recorded so far.
func (r *recorder) all() []*eventsv1.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

// typesOf names events.
func typesOf(evs []*eventsv1.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = events.Type(ev)
	}
	return out
}

// within is a context of the test that ends after d.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
