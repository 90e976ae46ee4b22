package cluster_test

import (
	"slices"
	"testing"

	"github.com/tack-run/tack/cluster"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// TestClusterClientTakesBack: a member whose health endpoint stops
// answering the client, and only the client (its proxy cut), leaves the
// client's view; when it answers again it comes back, under the same id,
// and the client reaches the session it hosts, which never moved (the
// members saw it all along). protoactor's own member list would have
// blocked that member in the client for good.
func TestClusterClientTakesBack(t *testing.T) {
	tc := startCluster(t)
	id := sessionID("d")
	if _, err := cluster.Reply(within(t, wait), client, id, &eventsv1.CreateSession{
		Script: &eventsv1.RawJSON{Json: []byte(`{"turns":[{"text":"one"},{"text":"two"}]}`)}}); err != nil {
		t.Fatal(err)
	}
	host := tc.host(t, id)
	before := tc.ids()
	t.Cleanup(proxies[host].Mend)
	proxies[host].Cut()
	waitMembers(t, 2)
	proxies[host].Mend()
	waitMembers(t, 3)

	if _, err := cluster.Reply(within(t, wait), client, id, &eventsv1.Prompt{Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	if now := tc.host(t, id); now != host {
		t.Fatalf("the session moved from member %d to %d", host, now)
	}
	// The members never dropped it: the same three, in every view.
	tc.converged(t, wait)
	if now := tc.ids(); !slices.Equal(now, before) {
		t.Fatalf("members %q, %q before: one joined again", now, before)
	}
	waitState(t, lookup(t, tc.member(host), id), "idle", 2)
}
