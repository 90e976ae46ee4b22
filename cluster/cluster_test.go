package cluster_test

import (
	"slices"
	"testing"

	"github.com/tack-run/tack/cluster"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// textRun is the events of one scripted run that answers with text.
var textRun = []string{"prompt_received", "agent_start", "message_committed", "state_changed", "agent_status", "turn_start",
	"request_start", "state_changed", "message_start", "message_delta", "response_complete", "message_committed",
	"token_usage", "turn_end", "state_changed", "agent_status", "agent_end"}

// TestClusterCreateAndDrive: a session created through member 1 and
// driven through members 2 and 3 and the cluster client is one session,
// on one member, with one history and one run of events numbered without
// a gap.
func TestClusterCreateAndDrive(t *testing.T) {
	tc := startCluster(t)
	id := sessionID("a")
	m1, m2, m3 := tc.members[0], tc.members[1], tc.members[2]
	r := request(t, remotev1.GatewayPID(m1.Addr), &eventsv1.CreateSession{Session: id,
		Script: &eventsv1.RawJSON{Json: []byte(`{"turns":[{"text":"one"},{"text":"two"},{"text":"three"}]}`)}})
	if got := r.GetCreated().GetSession(); got != id {
		t.Fatalf("created %q, want %q", got, id)
	}
	rec := follow(t, id, 0)
	rec.until(t, "session_created", wait)

	request(t, lookup(t, m2, id), &eventsv1.Prompt{Text: "first"})
	first := rec.until(t, "agent_end", wait)
	request(t, lookup(t, m3, id), &eventsv1.Prompt{Text: "second"})
	second := rec.until(t, "agent_end", wait)
	if _, err := cluster.Reply(within(t, wait), client, id, &eventsv1.Prompt{Text: "third"}); err != nil {
		t.Fatal(err)
	}
	third := rec.until(t, "agent_end", wait)
	for i, evs := range [][]*eventsv1.Event{first, second, third} {
		if got := typesOf(evs); !slices.Equal(got, textRun) {
			t.Fatalf("run %d: events\n got %q\nwant %q", i+1, got, textRun)
		}
	}
	all := rec.all()
	for i, ev := range all {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d (%s) has seq %d", i, typesOf(all[i:i+1]), ev.Seq)
		}
	}

	want := []string{"user:first", "assistant:one", "user:second", "assistant:two", "user:third", "assistant:three"}
	for _, m := range tc.members {
		if got := history(request(t, remotev1.SessionPID(m.Addr, id), &eventsv1.GetMessages{})); !slices.Equal(got, want) {
			t.Fatalf("history through %s: %q, want %q", m.Addr, got, want)
		}
	}
	r, err := cluster.Reply(within(t, wait), client, id, &eventsv1.GetMessages{})
	if err != nil || !slices.Equal(history(r), want) {
		t.Fatalf("history through the cluster: %q, %v", history(r), err)
	}

	// It runs on one member: the one its grain is on.
	host := tc.host(t, id)
	for i, m := range tc.members {
		loaded := false
		for _, s := range request(t, remotev1.GatewayPID(m.Addr), &eventsv1.ListSessions{}).GetSessions().GetSessions() {
			if s.Session == id {
				loaded = s.Loaded
			}
		}
		if loaded != (i == host) {
			t.Errorf("member %d lists %s loaded: %v (its grain is on member %d)", i, id, loaded, host)
		}
	}
}
