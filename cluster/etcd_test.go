package cluster_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/internal/tacknode"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// TestClusterRegistries: the same cluster with etcd (an etcd of its own
// on loopback; skipped where no etcd binary is installed — Debian's
// etcd-server has one) and with PostgreSQL as the registry of the
// members: a session created through one member is driven through
// another, and after its member is killed, through a third, restored
// there; the two members left agree that they are the cluster.
func TestClusterRegistries(t *testing.T) {
	for _, tt := range []struct {
		name    string
		members func(t *testing.T) func(int) []string
	}{
		{"etcd", func(t *testing.T) func(int) []string {
			clientURL, _ := startEtcd(t)
			return etcdMembers(clientURL)
		}},
		{"postgres", func(*testing.T) func(int) []string { return postgresMembers }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := startMembers(t, tt.members(t))
			id := firstTurn(t, tc, tc.member(1))

			// The members find each other's grain by the member list
			// the registry keeps; kill the session's member and go on
			// through another.
			host := tc.loadedOn(t, id)
			dead := tc.id(host)
			tc.member(host).Kill()
			secondTurn(t, tc.member((host+1)%3), id)
			tc.loadedOn(t, id)
			survivors := slices.DeleteFunc(tc.ids(), func(id string) bool { return id == dead })
			slices.Sort(survivors)
			eventually.Within(t, wait, func() error {
				if a, b := tc.view((host+1)%3), tc.view((host+2)%3); !slices.Equal(a, survivors) || !slices.Equal(b, survivors) {
					return fmt.Errorf("the survivors' views %q and %q, want %q", a, b, survivors)
				}
				return nil
			})
		})
	}
}

// firstTurn creates a session with a two-turn script through member 0,
// and has it answer a first prompt sent through m.
func firstTurn(t *testing.T, tc *testCluster, m *tacknode.Node) string {
	t.Helper()
	id := sessionID("s")
	request(t, remotev1.GatewayPID(tc.member(0).Addr), &eventsv1.CreateSession{Session: id,
		Script: &eventsv1.RawJSON{Json: []byte(`{"turns":[{"text":"one"},{"text":"two"}]}`)}})
	pid := lookup(t, m, id)
	request(t, pid, &eventsv1.Prompt{Text: "first"})
	waitState(t, pid, "idle", 2)
	return id
}

// secondTurn has session id (of firstTurn) answer a second prompt sent
// through m, and wants its whole history.
func secondTurn(t *testing.T, m *tacknode.Node, id string) {
	t.Helper()
	pid := lookup(t, m, id)
	request(t, pid, &eventsv1.Prompt{Text: "second"})
	waitState(t, pid, "idle", 4)
	want := []string{"user:first", "assistant:one", "user:second", "assistant:two"}
	if got := history(request(t, pid, &eventsv1.GetMessages{})); !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
}

// waitState waits until the session at pid is in state with messages
// in its history.
func waitState(t *testing.T, pid *actor.PID, state string, messages int32) {
	t.Helper()
	eventually.Within(t, 3*wait, func() error {
		if st := request(t, pid, &eventsv1.GetState{}).GetState(); st.State != state || st.MessageCount != messages {
			return fmt.Errorf("session at %s is %s with %d messages, want %s with %d", pid, st.State, st.MessageCount, state, messages)
		}
		return nil
	})
}

// loadedOn is the index of the member session id is loaded on, asked of
// the members themselves (the test's client is no member of an etcd or
// postgres cluster); it fails unless exactly one member has it loaded.
func (tc *testCluster) loadedOn(t *testing.T, id string) int {
	t.Helper()
	var on []int
	for i := range tc.members {
		if !tc.member(i).Running() {
			continue
		}
		for _, s := range request(t, remotev1.GatewayPID(tc.member(i).Addr), &eventsv1.ListSessions{}).GetSessions().GetSessions() {
			if s.Session == id && s.Loaded {
				on = append(on, i)
			}
		}
	}
	if len(on) != 1 {
		t.Fatalf("session %s is loaded on members %v, want one", id, on)
	}
	return on[0]
}

// startEtcd starts an etcd of the test's own on loopback and returns its
// client URL and process; the test is skipped where no etcd binary is installed
// (Debian: etcd-server), except under CI=true, where it fails.
func startEtcd(t *testing.T) (string, *os.Process) {
	t.Helper()
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no etcd binary, and CI=true: .ci/run installs Debian's etcd-server")
		}
		t.Skip("no etcd binary (Debian: apt-get install etcd-server)")
	}
	client, peer := mustFreePort(t), mustFreePort(t)
	clientURL, peerURL := "http://127.0.0.1:"+strconv.Itoa(client), "http://127.0.0.1:"+strconv.Itoa(peer)
	cmd := exec.Command(etcd, "--name", "tack-test", "--data-dir", memoryDir(t),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "tack-test="+peerURL)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	eventually.Within(t, wait, func() error {
		r, err := http.Get(clientURL + "/health")
		if err != nil {
			return fmt.Errorf("etcd did not come up: %w", err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			return fmt.Errorf("etcd did not come up: %s", r.Status)
		}
		return nil
	})

	return clientURL, cmd.Process
}

// memoryDir is a directory for etcd's data in memory (/dev/shm) where
// there is one, else on disk, removed when the test ends: etcd waits for
// every write to reach its disk, and a disk busy with the build's writes
// can stall it past the members' 3 s leases, which drops them all.
func memoryDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/dev/shm", "tack-etcd-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// mustFreePort is a free loopback port.
func mustFreePort(t *testing.T) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(fmt.Errorf("free port: %w", err))
	}
	return p
}
