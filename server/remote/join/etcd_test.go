package join_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// TestClusterEtcd: the same cluster with etcd as the provider (an etcd
// of its own on loopback; skipped where no etcd binary is installed —
// Debian's etcd-server has one): a session created through one member is
// driven through another, and after its member is killed, through a
// third, restored there.
func TestClusterEtcd(t *testing.T) {
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no etcd binary, and CI=true: .ci/run installs Debian's etcd-server")
		}
		t.Skip("no etcd binary (Debian: apt-get install etcd-server)")
	}
	client, peer := mustFreePort(t), mustFreePort(t)
	clientURL, peerURL := "http://127.0.0.1:"+strconv.Itoa(client), "http://127.0.0.1:"+strconv.Itoa(peer)
	cmd := exec.Command(etcd, "--name", "tack-test", "--data-dir", t.TempDir(),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "tack-test="+peerURL)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
		if r, err := http.Get(clientURL + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("etcd did not come up")
		}
	}

	tc := startMembers(t, func(int) []string {
		return []string{"--cluster-provider", "etcd", "--cluster-seeds", clientURL}
	})
	id := sessionID("e")
	request(t, remotev1.GatewayPID(tc.member(0).Addr), &eventsv1.CreateSession{Session: id,
		Script: &eventsv1.RawJSON{Json: []byte(`{"turns":[{"text":"one"},{"text":"two"}]}`)}})
	waitIdle := func(pid func() *eventsv1.Reply, messages int32) {
		for deadline := time.Now().Add(3 * wait); ; time.Sleep(20 * time.Millisecond) {
			if st := pid().GetState(); st.State == "idle" && st.MessageCount == messages {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the run did not end")
			}
		}
	}
	via := func(i int) func() *eventsv1.Reply {
		pid := lookup(t, tc.member(i), id)
		return func() *eventsv1.Reply { return request(t, pid, &eventsv1.GetState{}) }
	}
	pid := lookup(t, tc.member(1), id)
	request(t, pid, &eventsv1.Prompt{Text: "first"})
	waitIdle(via(1), 2)

	// The members find each other's grain by the member list etcd keeps;
	// kill the session's member and go on through another.
	var host int
	for i := range tc.members {
		for _, s := range request(t, remotev1.GatewayPID(tc.member(i).Addr), &eventsv1.ListSessions{}).GetSessions().GetSessions() {
			if s.Session == id && s.Loaded {
				host = i
			}
		}
	}
	tc.member(host).Kill()
	other := (host + 1) % 3
	pid = lookup(t, tc.member(other), id)
	request(t, pid, &eventsv1.Prompt{Text: "second"})
	waitIdle(via(other), 4)
	want := []string{"user:first", "assistant:one", "user:second", "assistant:two"}
	if got := history(request(t, pid, &eventsv1.GetMessages{})); !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
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
