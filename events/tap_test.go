package events_test

import (
	"slices"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// recorder is a Sink that notes who was told what, in order.
type recorder struct {
	name string
	log  *[]string
}

func (r *recorder) Deliver(ev *eventsv1.Event) {
	*r.log = append(*r.log, r.name+":"+events.Type(ev))
}

// TestTap: a tap sees every event, from the first, before the
// subscribers; it gets no replay and is not a subscriber.
func TestTap(t *testing.T) {
	var log []string
	s := newTestStream(events.WithTap(&recorder{"tap", &log}))
	s.Emit(&eventsv1.AgentStart{RunId: "r-1"})
	s.Subscribe(&recorder{"sub", &log}, 0, events.Filter{})
	s.Emit(&eventsv1.MessageDelta{Delta: "a"})
	if n := s.Subscribers(); n != 1 {
		t.Errorf("Subscribers %d, want 1", n)
	}
	want := []string{"tap:agent_start", "sub:agent_start", "tap:message_delta", "sub:message_delta"}
	if !slices.Equal(log, want) {
		t.Errorf("told %v, want %v", log, want)
	}
}
