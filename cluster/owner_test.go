package cluster_test

import (
	"testing"

	"github.com/tack-run/tack/cluster"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// TestRequestForUser: a command sent through the cluster for a user
// (RequestFor, what a front end does for a request's user) reaches the
// session only if it is theirs, wherever it runs: another user's
// session answers invalid_session, to a read, a prompt, an export, a
// close and a delete, and is left as it was. A front end checks the owner before it
// sends a command by id; the id may change hands in between. Following
// its events is refused to another user too.
func TestRequestForUser(t *testing.T) {
	startCluster(t)
	id := sessionID("own")
	ctx := within(t, wait)
	if _, err := cluster.Reply(ctx, client, id, &remotev1.Create{User: "alice",
		Create: &eventsv1.CreateSession{Session: id, Script: &eventsv1.RawJSON{Json: []byte(`{"turns":[{"text":"hi"}]}`)}}}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []any{&eventsv1.GetState{}, &eventsv1.Prompt{Text: "from bob"}, &eventsv1.ExportSession{},
		&eventsv1.CloseSession{}, &eventsv1.DeleteSession{}} {
		res, err := cluster.RequestFor(ctx, client, id, "bob", cmd)
		if r, ok := res.(*eventsv1.Reply); err != nil || !ok || r.GetError().GetCode() != "invalid_session" {
			t.Fatalf("bob's %T to alice's session: %v, %v; want invalid_session", cmd, res, err)
		}
	}
	if pid, err := cluster.FollowFor(client, id, "bob", 0, nil, func(*eventsv1.Event) {}); err == nil {
		client.ActorSystem.Root.Stop(pid)
		t.Fatal("bob followed alice's session")
	}
	pid, err := cluster.FollowFor(client, id, "alice", 0, nil, func(*eventsv1.Event) {})
	if err != nil {
		t.Fatalf("alice's follow of her session: %v", err)
	}
	client.ActorSystem.Root.Stop(pid)
	res, err := cluster.RequestFor(ctx, client, id, "alice", &eventsv1.GetMessages{})
	if r, ok := res.(*eventsv1.Reply); err != nil || !ok || r.Error != nil || len(r.GetMessages().GetMessages()) != 0 {
		t.Fatalf("alice's read of her session: %v, %v; want it there, untouched", res, err)
	}
}
