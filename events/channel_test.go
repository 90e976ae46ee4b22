package events_test

import (
	"fmt"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// drain receives everything buffered in ch without blocking.
func drain(ch *events.Channel) []*eventsv1.Event {
	var out []*eventsv1.Event
	for {
		select {
		case ev, ok := <-ch.C():
			if !ok {
				return out
			}
			out = append(out, ev)
		default:
			return out
		}
	}
}

// TestChannelStalledReader publishes 100k events to a subscriber that
// never reads: Publish must not wait, and once the reader catches up it
// sees events_lost with the exact range, then contiguous live events.
func TestChannelStalledReader(t *testing.T) {
	const buffer, total = 16, 100_000
	s := newTestStream()
	ch := events.NewChannel(buffer)
	s.Subscribe(ch, 0, events.Filter{})
	publishDeltas(s, total) // would deadlock if Deliver blocked

	got := drain(ch)
	if want := seqRange(1, buffer); fmt.Sprint(seqs(got)) != fmt.Sprint(want) {
		t.Fatalf("before catching up got %v, want %v", seqs(got), want)
	}
	publishDeltas(s, 3)
	got = drain(ch)
	want := append([]string{fmt.Sprintf("lost(%d-%d)", buffer+1, total)}, seqRange(total+1, total+3)...)
	if fmt.Sprint(seqs(got)) != fmt.Sprint(want) {
		t.Fatalf("after catching up got %v, want %v", seqs(got), want)
	}
	lost := got[0]
	if lost.GetSeq() != 0 || lost.GetSession() != "s1" || lost.GetTsUnixNano() != got[1].GetTsUnixNano() {
		t.Errorf("notice stamped %q/%d/%d, want s1/0/ts of the next event", lost.GetSession(), lost.GetSeq(), lost.GetTsUnixNano())
	}

	// The reader fills the gap from the ring with since = from-1.
	refill := s.Replay(lost.GetEventsLost().GetFrom()-1, events.Filter{})
	if first := refill[0].GetEventsLost(); first == nil || first.GetFrom() != buffer+1 {
		t.Errorf("refill starts with %v", refill[0])
	}
	ch.Close()
}

func TestChannelOverflow(t *testing.T) {
	// Each step publishes some events, then lets the reader take some.
	type step struct {
		publish int
		read    int
	}
	tests := []struct {
		name   string
		buffer int
		steps  []step
		want   []string // everything read, in order
	}{
		{
			name:   "fits",
			buffer: 4,
			steps:  []step{{publish: 4, read: 4}, {publish: 4, read: 4}},
			want:   seqRange(1, 8),
		},
		{
			name:   "one lost, recovers when room for two",
			buffer: 4,
			steps:  []step{{publish: 5, read: 1}, {publish: 1, read: 10}},
			// 1..4 fit, 5 lost; after one read there is room for two
			// only counting the reserve slot: 6 arrives with the notice.
			want: []string{"1", "2", "3", "4", "lost(5-5)", "6"},
		},
		{
			name:   "keeps dropping until room for two",
			buffer: 3,
			steps: []step{
				{publish: 5, read: 0}, // 1..3 in, 4..5 lost
				{publish: 1, read: 0}, // 6 lost (full)
				{publish: 2, read: 10},
				{publish: 2, read: 10},
			},
			want: []string{"1", "2", "3", "lost(4-8)", "9", "10"},
		},
		{
			name:   "buffer of one",
			buffer: 1,
			steps:  []step{{publish: 3, read: 10}, {publish: 2, read: 10}},
			want:   []string{"1", "lost(2-3)", "4"}, // 5 is lost, not yet reported
		},
		{
			name:   "loses again after recovering",
			buffer: 2,
			steps:  []step{{publish: 4, read: 10}, {publish: 4, read: 10}, {publish: 1, read: 10}},
			want:   []string{"1", "2", "lost(3-4)", "5", "lost(6-8)", "9"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStream()
			ch := events.NewChannel(tt.buffer)
			s.Subscribe(ch, 0, events.Filter{})
			var got []*eventsv1.Event
			for _, st := range tt.steps {
				publishDeltas(s, st.publish)
				for range st.read {
					select {
					case ev := <-ch.C():
						got = append(got, ev)
						continue
					default:
					}
					break
				}
			}
			if fmt.Sprint(seqs(got)) != fmt.Sprint(tt.want) {
				t.Errorf("read %v, want %v", seqs(got), tt.want)
			}
		})
	}
}

func TestChannelDropsReplayedNotice(t *testing.T) {
	// A subscriber reconnecting far behind into a full channel loses the
	// replay's own events_lost notice: the range that notice reported is
	// merged into the channel's.
	s := newTestStream(events.WithRingSize(4))
	publishDeltas(s, 11) // the ring holds 8..11
	ch := events.NewChannel(1)
	ch.Deliver(events.New(&eventsv1.MessageDelta{})) // fills the buffer
	s.Subscribe(ch, 0, events.Filter{})              // lost(1-7), 8..11: all dropped
	<-ch.C()
	publishDeltas(s, 1)
	if got, want := seqs(drain(ch)), []string{"lost(1-11)", "12"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestChannelClose: Close ends C after what it buffered and closes Done,
// which takes nothing from C.
func TestChannelClose(t *testing.T) {
	ch := events.NewChannel(2)
	ch.Deliver(events.New(&eventsv1.MessageDelta{}))
	select {
	case <-ch.Done():
		t.Fatal("Done is closed before Close")
	default:
	}
	ch.Close()
	ch.Close()
	<-ch.Done()
	ch.Deliver(events.New(&eventsv1.MessageDelta{})) // ignored, no panic
	n := 0
	for range ch.C() {
		n++
	}
	if n != 1 {
		t.Errorf("read %d events after Close, want 1", n)
	}
}

// TestChannelConcurrentReader runs a reader goroutine against a publisher
// and checks what it read: live events in order, every gap announced by an
// events_lost that covers it exactly.
func TestChannelConcurrentReader(t *testing.T) {
	const total = 20_000
	s := newTestStream()
	ch := events.NewChannel(8)
	s.Subscribe(ch, 0, events.Filter{})
	done := make(chan []*eventsv1.Event)
	go func() {
		var got []*eventsv1.Event
		for ev := range ch.C() {
			got = append(got, ev)
		}
		done <- got
	}()
	publishDeltas(s, total)
	s.Unsubscribe(ch)
	ch.Close()
	got := <-done

	next := uint64(1) // the next seq the reader must account for
	for _, ev := range got {
		if l := ev.GetEventsLost(); l != nil {
			if l.GetFrom() != next || l.GetTo() < l.GetFrom() {
				t.Fatalf("events_lost(%d-%d) while expecting seq %d", l.GetFrom(), l.GetTo(), next)
			}
			next = l.GetTo() + 1
			continue
		}
		if ev.GetSeq() != next {
			t.Fatalf("got seq %d, want %d", ev.GetSeq(), next)
		}
		next++
	}
	t.Logf("read %d of %d events (incl. notices); accounted up to seq %d", len(got), total, next-1)
}
