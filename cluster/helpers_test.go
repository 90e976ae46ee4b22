package cluster_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/cluster"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/internal/tacknode"
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
	addrs := make([]string, len(seeds))
	for j, p := range seeds {
		addrs[j] = p.Addr()
	}
	tc := startMembers(t, func(i int) []string {
		port, err := pickPort(i)
		if err != nil {
			t.Fatal(err)
		}
		return []string{"--cluster-seeds", strings.Join(addrs, ","), "--cluster-port", strconv.Itoa(port), "--cluster-refresh", refresh.String(), "--cluster-ttl", registrationTTL}
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
	tc.converged(t, wait)
	return tc
}

// postgresMembers are the cluster flags of members on the postgres
// provider: they register in their store.
func postgresMembers(int) []string {
	return []string{"--cluster-provider", "postgres", "--cluster-ttl", registrationTTL, "--cluster-refresh", refresh.String()}
}

// registrationTTL is the members' --cluster-ttl (ttl).
var registrationTTL = ttl.String()

var (
	// memberLine is a member's line telling its member id.
	memberLine = regexp.MustCompile(`tack node: listening on \S+ \(.*, member (\S+)\)$`)
	// viewLine is a member's line telling its view of the cluster.
	viewLine = regexp.MustCompile(`tack node: cluster \S+ has \d+ members:(.*)$`)
)

// id is member i's member id as it runs now ("" before it said).
func (tc *testCluster) id(i int) string {
	l, _ := tc.member(i).LastLog("tack node: listening on")
	if m := memberLine.FindStringSubmatch(l); m != nil {
		return m[1]
	}
	return ""
}

// view is member i's last view of the cluster: its members' ids, sorted.
func (tc *testCluster) view(i int) []string {
	l, _ := tc.member(i).LastLog("tack node: cluster " + clusterName + " has")
	if m := viewLine.FindStringSubmatch(l); m != nil {
		return strings.Fields(m[1])
	}
	return nil
}

// converged waits up to d until every member's view of the cluster is
// the same: the three members as they run now, each under the member id
// it last joined with. This is what the cluster must come back to after
// any stall, kill or outage, whatever route it took there.
func (tc *testCluster) converged(t *testing.T, d time.Duration) {
	t.Helper()
	eventually.Within(t, d, func() error {
		want := make([]string, len(tc.members))
		for i := range tc.members {
			want[i] = tc.id(i)
		}
		slices.Sort(want)
		var views [][]string
		agree := true
		for i := range tc.members {
			v := tc.view(i)
			views = append(views, v)
			agree = agree && slices.Equal(v, want)
		}
		if !agree {
			return fmt.Errorf("the members' views %q did not come to the members %q", views, want)
		}
		return nil
	})
}

// start starts member i (again).
func (tc *testCluster) start(t *testing.T, i int) *tacknode.Node {
	t.Helper()
	var m *tacknode.Node
	for try := 1; ; try++ {
		var err error
		m, err = tacknode.TryStart(t, tackBin, append([]string{"--store", tc.dsn, "--cluster", clusterName,
			"--lease-ttl", leaseTTL, "--passivate-after", "0", "-v"}, tc.provider(i)...)...)
		if err == nil {
			break
		}
		// Another process took the port provider picked for the member's
		// automanaged endpoint before the member bound it: it picks again.
		if try == 5 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
	}
	tc.mu.Lock()
	tc.members[i] = m
	tc.mu.Unlock()
	return m
}

// host is the index of the member whose grain hosts session id.
func (tc *testCluster) host(t *testing.T, id string) int {
	t.Helper()
	pid := cluster.Grain(client, id)
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
	eventually.Within(t, wait, func() error {
		if got := client.Members(); got != n {
			return fmt.Errorf("the client sees %d members, want %d", got, n)
		}
		return nil
	})
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
	pid, err := cluster.Follow(client, id, since, nil, r.handle)
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
