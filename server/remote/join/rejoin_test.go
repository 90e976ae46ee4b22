package join_test

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestClusterRejoin: a member stalled (SIGSTOP, as a long pause or a
// starved machine would) past what the provider allows — its etcd lease,
// or a health poll of the automanaged provider — is dropped by the
// others, which never take it back under the identity it had. When it
// runs again it leaves and joins as a new member on the same address:
// with etcd it sees itself dropped, with automanaged the others tell it.
// The session it hosted, restored elsewhere meanwhile, is reached through
// it again with its whole history.
func TestClusterRejoin(t *testing.T) {
	t.Run("etcd", func(t *testing.T) {
		clientURL, _ := startEtcd(t)
		stallAndRejoin(t, startMembers(t, func(int) []string {
			return []string{"--cluster-provider", "etcd", "--cluster-seeds", clientURL}
		}))
	})
	// etcd itself stalls: every lease lapses, every member is dropped and
	// rejoins, and none of the old members stays registered (protoactor's
	// provider re-registers a lapsed member; Forget takes that back).
	t.Run("etcd stalls", func(t *testing.T) {
		clientURL, etcd := startEtcd(t)
		tc := startMembers(t, func(int) []string {
			return []string{"--cluster-provider", "etcd", "--cluster-seeds", clientURL}
		})
		id := firstTurn(t, tc, tc.member(0))
		marks := make([]int, len(tc.members))
		for i := range tc.members {
			marks[i] = tc.member(i).Lines()
		}
		_ = etcd.Signal(syscall.SIGSTOP)
		time.Sleep(5 * time.Second) // past the members' leases (3 s): the stall itself
		_ = etcd.Signal(syscall.SIGCONT)
		for i := range tc.members {
			m := tc.member(i)
			m.WaitLogSince(t, marks[i], "dropped from cluster "+clusterName, "rejoining as a new member")
			m.WaitLogSince(t, marks[i], "listening on "+m.Addr)
		}
		// Settled: every member's last count is 3, none larger.
		for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
			settled := true
			for i := range tc.members {
				if l, _ := tc.member(i).LastLog("cluster " + clusterName + " has"); !strings.HasSuffix(l, " has 3 members") {
					settled = false
				}
			}
			if settled {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the members' views did not settle at 3 members")
			}
		}
		secondTurn(t, tc.member(1), id)
	})
	t.Run("automanaged", func(t *testing.T) {
		stallAndRejoin(t, startCluster(t))
	})
}

// stallAndRejoin stalls the member of a session until another member
// drops it, resumes it, and wants it back as a new member serving the
// session.
func stallAndRejoin(t *testing.T, tc *testCluster) {
	t.Helper()
	id := firstTurn(t, tc, tc.member(0))

	host := tc.loadedOn(t, id)
	stalled, other := tc.member(host), tc.member((host+1)%3)
	marks := make([]int, len(tc.members))
	for i := range tc.members {
		marks[i] = tc.member(i).Lines()
	}
	stalled.Pause()
	other.WaitLogSince(t, marks[(host+1)%3], "cluster "+clusterName+" has 2 members")
	stalled.Resume()
	stalled.WaitLogSince(t, marks[host], "dropped from cluster "+clusterName, "rejoining as a new member")
	rejoined := stalled.Lines()
	stalled.WaitLogSince(t, marks[host], "listening on "+stalled.Addr)
	for i := range tc.members {
		if i == host {
			marks[i] = rejoined
		}
		tc.member(i).WaitLogSince(t, marks[i], "cluster "+clusterName+" has 3 members")
	}

	secondTurn(t, stalled, id)
}
