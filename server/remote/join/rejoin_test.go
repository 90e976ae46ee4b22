package join_test

import (
	"slices"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/remote/remotev1"
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
		clientURL := startEtcd(t)
		stallAndRejoin(t, startMembers(t, func(int) []string {
			return []string{"--cluster-provider", "etcd", "--cluster-seeds", clientURL}
		}))
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
	id := sessionID("r")
	request(t, remotev1.GatewayPID(tc.member(0).Addr), &eventsv1.CreateSession{Session: id,
		Script: &eventsv1.RawJSON{Json: []byte(`{"turns":[{"text":"one"},{"text":"two"}]}`)}})
	first := lookup(t, tc.member(0), id)
	request(t, first, &eventsv1.Prompt{Text: "first"})
	waitState(t, first, "idle", 2)

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

	pid := lookup(t, stalled, id)
	request(t, pid, &eventsv1.Prompt{Text: "second"})
	waitState(t, pid, "idle", 4)
	want := []string{"user:first", "assistant:one", "user:second", "assistant:two"}
	if got := history(request(t, pid, &eventsv1.GetMessages{})); !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
}
