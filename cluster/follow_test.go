package cluster

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// TestNews: what a follower hands on of what it is sent, given the last
// seq it had — among them the race TestClusterJepsen once met, where the
// session's last event on the member it left came after the follower had
// subscribed again, and the new member's events_lost began at it.
func TestNews(t *testing.T) {
	delta := func(seq uint64) *eventsv1.Event {
		ev := events.New(&eventsv1.MessageDelta{Delta: "x"})
		ev.Seq = seq
		return ev
	}
	lost := func(from, to uint64) *eventsv1.Event { return events.New(&eventsv1.EventsLost{From: from, To: to}) }
	for _, tc := range []struct {
		name     string
		ev       *eventsv1.Event
		last     uint64
		want     *eventsv1.Event // nil: not news
		wantLast uint64
	}{
		{"the next event", delta(61), 60, delta(61), 61},
		{"an event after a gap", delta(70), 60, delta(70), 70},
		{"an event had already", delta(60), 60, nil, 60},
		{"a late event of the old member", delta(59), 32829, nil, 32829},
		{"events_lost after last", lost(61, 32828), 60, lost(61, 32828), 32828},
		{"events_lost from an event had", lost(60, 32828), 60, lost(61, 32828), 32828},
		{"events_lost from long before", lost(3, 32828), 60, lost(61, 32828), 32828},
		{"events_lost of events all had", lost(50, 60), 60, nil, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := proto.Clone(tc.ev)
			got, last, ok := news(tc.ev, tc.last)
			if ok != (tc.want != nil) || last != tc.wantLast || ok && !proto.Equal(got, tc.want) {
				t.Fatalf("news = %v, %d, %v; want %v, %d", got, last, ok, tc.want, tc.wantLast)
			}
			if !proto.Equal(tc.ev, sent) {
				t.Fatalf("news changed the event it was sent: %v, was %v", tc.ev, sent)
			}
		})
	}
}
