package cluster_test

import (
	"fmt"
	"net/url"
	"slices"
	"syscall"
	"testing"

	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/store/postgres/pgtest"
)

// TestClusterRejoin: a member stalled (SIGSTOP, as a long pause or a
// starved machine would) past what the provider allows — its etcd or
// postgres registration, or a health poll of the automanaged provider —
// is dropped by the others, which never take it back under the identity
// it had. When it runs again the cluster comes back to one view that
// every member shares, of the three members as they run now (the stalled
// one joined again as a new member), and the session it hosted, restored
// elsewhere meanwhile, is reached through it with its whole history, and
// runs on one member.
func TestClusterRejoin(t *testing.T) {
	t.Run("etcd", func(t *testing.T) {
		clientURL, _ := startEtcd(t)
		stallAndRejoin(t, startMembers(t, etcdMembers(clientURL)))
	})
	// etcd itself stalls past every registration, and past the members'
	// first attempts to join again: every member finds its registration
	// lapsed, tries to join again until etcd answers, and the views come
	// back to one.
	t.Run("etcd stalls", func(t *testing.T) {
		clientURL, etcd := startEtcd(t)
		registryOutage(t, startMembers(t, etcdMembers(clientURL)),
			func() { _ = etcd.Signal(syscall.SIGSTOP) }, func() { _ = etcd.Signal(syscall.SIGCONT) })
	})
	// PostgreSQL, the registry and the store at once, cannot be reached
	// (every connection to it cut) past every registration: the same
	// recovery, and the session's history is whole after it.
	t.Run("postgres unreachable", func(t *testing.T) {
		proxy, dsn := pgProxy(t)
		tc := &testCluster{dsn: dsn, provider: postgresMembers}
		for i := range tc.members {
			tc.start(t, i)
		}
		tc.converged(t, wait)
		registryOutage(t, tc, proxy.Cut, proxy.Mend)
	})
	t.Run("postgres", func(t *testing.T) {
		stallAndRejoin(t, startMembers(t, postgresMembers))
	})
	t.Run("automanaged", func(t *testing.T) {
		stallAndRejoin(t, startCluster(t))
	})
}

// registryOutage has a session answer a first turn, makes the members'
// registry unreachable (stop) until every member, unable to renew for
// the TTL, has counted itself dropped and failed to join again once,
// then reachable again (resume); it wants every member to join again
// under a new id, the views to come back to one, and the session to
// answer its second turn with its whole history, loaded on one member.
func registryOutage(t *testing.T, tc *testCluster, stop, resume func()) {
	t.Helper()
	id := firstTurn(t, tc, tc.member(0))
	before := tc.ids()
	marks := make([]int, len(tc.members))
	for i := range tc.members {
		marks[i] = tc.member(i).Lines()
	}
	stop()
	// A member counts itself dropped after the TTL, closes its runtime
	// (the sessions' stops, each waiting for its write under way, and the
	// release of their leases, each bounded by a timeout that the store
	// out of reach may use up), then fails to join again once.
	for i := range tc.members {
		tc.member(i).WaitLogWithin(t, 2*wait, marks[i], "rejoining cluster "+clusterName, "trying again")
	}
	resume()
	// No member keeps a registration that lapsed: each joins again.
	eventually.Within(t, 3*wait, func() error {
		if ids := tc.ids(); slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(before, id) }) {
			return fmt.Errorf("members %q after the registry was away past their registrations, %q before: one kept its registration", ids, before)
		}
		return nil
	})
	tc.converged(t, 3*wait)
	secondTurn(t, tc.member(1), id)
	tc.loadedOn(t, id)
}

// pgProxy is a proxy in front of the test's PostgreSQL, and a DSN of a
// fresh schema that goes through it.
func pgProxy(t *testing.T) (*tcpProxy, string) {
	t.Helper()
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil || u.Host == "" {
		t.Skipf("TACK_TEST_POSTGRES is not a postgres:// URL (%v)", err)
	}
	proxy, err := newTCPProxy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	u.Host = proxy.Addr()
	return proxy, u.String()
}

// etcdMembers are the cluster flags of members on the etcd at clientURL.
func etcdMembers(clientURL string) func(int) []string {
	return func(int) []string {
		return []string{"--cluster-provider", "etcd", "--cluster-seeds", clientURL, "--cluster-ttl", registrationTTL, "--cluster-refresh", refresh.String()}
	}
}

// ids are the members' ids as they run now.
func (tc *testCluster) ids() []string {
	out := make([]string, len(tc.members))
	for i := range tc.members {
		out[i] = tc.id(i)
	}
	return out
}

// stallAndRejoin stalls the member of a session until another member
// drops it, resumes it, and wants the cluster back at one view of three,
// the stalled member under a new id, serving the session.
func stallAndRejoin(t *testing.T, tc *testCluster) {
	t.Helper()
	id := firstTurn(t, tc, tc.member(0))

	host := tc.loadedOn(t, id)
	stalled, old := tc.member(host), tc.id(host)
	other := (host + 1) % 3
	func() {
		defer stalled.Resume() // also when a wait fails the test
		stalled.Pause(t)
		eventually.Within(t, 3*wait, func() error {
			if v := tc.view(other); slices.Contains(v, old) {
				return fmt.Errorf("member %d still sees the stalled member %s: %q", other, old, v)
			}
			return nil
		})
	}()
	tc.converged(t, 3*wait)
	if tc.id(host) == old {
		t.Fatalf("the stalled member is back under its old id %s", old)
	}

	secondTurn(t, stalled, id)
	tc.loadedOn(t, id)
}
