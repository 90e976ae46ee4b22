package events_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

func TestNewMessageDelta(t *testing.T) {
	for _, text := range []string{"", "x", "Hello, world"} {
		got, want := events.NewMessageDelta(text), events.New(&eventsv1.MessageDelta{Delta: text})
		if !proto.Equal(got, want) {
			t.Errorf("NewMessageDelta(%q) = %v, want %v", text, got, want)
		}
		if got.GetMessageDelta().GetDelta() != text {
			t.Errorf("NewMessageDelta(%q) carries %q", text, got.GetMessageDelta().GetDelta())
		}
	}
	if n := testing.AllocsPerRun(100, func() { events.NewMessageDelta("tok") }); n != 1 {
		t.Errorf("NewMessageDelta allocates %v times, want 1", n)
	}
	// A published delta survives the collector as one block: its payload
	// stays readable however the event is held.
	s := events.NewStream("s1")
	s.Publish(events.NewMessageDelta("a"))
	if got := s.Replay(0, events.Filter{})[0].GetMessageDelta().GetDelta(); got != "a" {
		t.Errorf("replayed delta %q", got)
	}
}
