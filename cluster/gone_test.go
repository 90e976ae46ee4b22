package cluster_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tack-run/tack/cluster"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// TestClusterRequestToAGoneMember: a command waiting for the answer of a
// member that leaves the cluster — stopped with SIGSTOP, so the client's
// polls of it time out — ends as ErrNoAnswer as soon as the client drops
// that member, not at its deadline a minute on (protoactor drops what it
// was writing to a member that goes without a dead letter, so no answer
// would ever come); a read sent with it (cluster.Read) asks again where the
// session is now and is answered there once it is restored; and the
// history holds the prompt at most once.
func TestClusterRequestToAGoneMember(t *testing.T) {
	tc := startCluster(t)
	id := sessionID("e")
	if _, err := cluster.Reply(within(t, wait), client, id, &eventsv1.CreateSession{
		Script: &eventsv1.RawJSON{Json: []byte(`{"turns":[{"text":"one"}]}`)}}); err != nil {
		t.Fatal(err)
	}
	host := tc.host(t, id) // the client keeps the grain's PID
	stalled := tc.member(host)
	grain, view := cluster.Grain(client, id), clientView()
	t.Cleanup(stalled.Kill)
	stalled.Pause(t)
	paused := time.Now()

	ctx := within(t, time.Minute)
	type answer struct {
		res any
		err error
	}
	prompted := make(chan answer, 1)
	go func() {
		res, err := cluster.Reply(ctx, client, id, &eventsv1.Prompt{Text: "lost"})
		prompted <- answer{res, err}
	}()
	read := make(chan answer, 1)
	go func() {
		res, err := cluster.Read(ctx, client, id, &eventsv1.GetState{})
		read <- answer{res, err}
	}()

	select {
	case a := <-prompted:
		if !errors.Is(a.err, cluster.ErrNoAnswer) {
			// What the client knew when the member stopped and knows now
			// tells whether the prompt ever went to the stalled member.
			t.Logf("before the stop: grain %v, members %v", grain, view)
			t.Logf("now: grain %v, members %v", cluster.Grain(client, id), clientView())
			t.Logf("the member's process: %q %v after the stop", stalled.State(), time.Since(paused))
			t.Fatalf("the prompt to the stalled member: %v %v, want ErrNoAnswer", a.res, a.err)
		}
	case <-time.After(wait):
		t.Fatalf("the prompt to the stalled member still waits %v on", wait)
	}
	select {
	case a := <-read:
		if r, _ := a.res.(*eventsv1.Reply); a.err != nil || r.GetState() == nil {
			t.Fatalf("the read: %v %v", a.res, a.err)
		}
	case <-time.After(3 * wait):
		t.Fatalf("the read got no answer in %v", 3*wait)
	}
	if now := tc.host(t, id); now == host {
		t.Fatalf("the session is still on the stalled member %d", host)
	}
	// The prompt may or may not have been done (the stalled member may
	// have taken it as it stopped), but never twice.
	r, err := cluster.Read(ctx, client, id, &eventsv1.GetMessages{})
	if err != nil {
		t.Fatal(err)
	}
	if h := history(r.(*eventsv1.Reply)); len(h) > 2 || len(h) > 0 && h[0] != "user:lost" {
		t.Fatalf("history %q", h)
	}
}

// clientView is the members the client sees, as address/id.
func clientView() []string {
	if v := view.Load(); v != nil {
		return *v
	}
	return nil
}
