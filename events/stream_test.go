package events_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// fakeClock ticks one millisecond per reading.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time {
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func newTestStream(opts ...events.StreamOption) *events.Stream {
	clock := &fakeClock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	return events.NewStream("s1", append([]events.StreamOption{events.WithClock(clock.now)}, opts...)...)
}

// publishDeltas publishes n message_delta events whose text is their seq.
func publishDeltas(s *events.Stream, n int) {
	for range n {
		s.Emit(&eventsv1.MessageDelta{Delta: fmt.Sprint(s.LastSeq() + 1)})
	}
}

// seqs lists the seq of each event, with events_lost notices as
// "lost(from-to)".
func seqs(evs []*eventsv1.Event) []string {
	var out []string
	for _, ev := range evs {
		if l := ev.GetEventsLost(); l != nil {
			out = append(out, fmt.Sprintf("lost(%d-%d)", l.GetFrom(), l.GetTo()))
			continue
		}
		out = append(out, fmt.Sprint(ev.GetSeq()))
	}
	return out
}

func seqRange(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

func TestPublishStamps(t *testing.T) {
	s := newTestStream()
	if s.LastSeq() != 0 {
		t.Fatalf("LastSeq before publishing = %d", s.LastSeq())
	}
	rec := eventstest.NewRecorder()
	s.Subscribe(rec, 0, events.Filter{})
	s.Emit(&eventsv1.SessionCreated{Model: "m"})
	ev := events.New(&eventsv1.MessageDelta{Delta: "x"})
	ev.Session, ev.Seq = "other", 99 // overwritten
	s.Publish(ev)
	publishDeltas(s, 3)

	got := rec.Events()
	eventstest.ExpectTypes(t, got, "session_created", "message_delta", "message_delta", "message_delta", "message_delta")
	for i, ev := range got {
		if ev.GetSeq() != uint64(i+1) || ev.GetSession() != "s1" {
			t.Errorf("event %d: session %q seq %d", i, ev.GetSession(), ev.GetSeq())
		}
		want := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC).Add(time.Duration(i+1) * time.Millisecond)
		if ev.GetTsUnixNano() != want.UnixNano() {
			t.Errorf("event %d: ts %d, want %d", i, ev.GetTsUnixNano(), want.UnixNano())
		}
	}
	if s.LastSeq() != 5 || s.Len() != 5 {
		t.Errorf("LastSeq = %d, Len = %d", s.LastSeq(), s.Len())
	}

	// An event that carries a time keeps it, in the ring too.
	stamped := events.New(&eventsv1.MessageDelta{Delta: "y"})
	stamped.TsUnixNano = 42
	s.Publish(stamped)
	if got := s.Replay(5, events.Filter{}); len(got) != 1 || got[0].GetTsUnixNano() != 42 || rec.Events()[5].GetTsUnixNano() != 42 {
		t.Errorf("a stamped event was told and kept with another time: %v", got)
	}
}

func TestWithLastSeq(t *testing.T) {
	s := newTestStream(events.WithLastSeq(40))
	rec := eventstest.NewRecorder()
	s.Subscribe(rec, 38, events.Filter{})
	publishDeltas(s, 2)
	want := []string{"lost(39-40)", "41", "42"}
	if got := seqs(rec.Events()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPublishWithoutPayloadPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	events.NewStream("s").Publish(&eventsv1.Event{})
}

func TestRingWrap(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		publish int
		want    []string // Replay(0) seqs
	}{
		{"empty", 4, 0, nil},
		{"partly filled", 4, 3, seqRange(1, 3)},
		{"exactly full", 4, 4, seqRange(1, 4)},
		{"wrapped once", 4, 5, append([]string{"lost(1-1)"}, seqRange(2, 5)...)},
		{"wrapped many times", 4, 103, append([]string{"lost(1-99)"}, seqRange(100, 103)...)},
		{"size not a power of two", 10, 37, append([]string{"lost(1-27)"}, seqRange(28, 37)...)},
		{"grows past the first allocation", 100, 90, seqRange(1, 90)},
		{"no ring", 0, 3, []string{"lost(1-3)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStream(events.WithRingSize(tt.size))
			publishDeltas(s, tt.publish)
			got := seqs(s.Replay(0, events.Filter{}))
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Replay(0) = %v, want %v", got, tt.want)
			}
			if want := min(tt.size, tt.publish); s.Len() != want {
				t.Errorf("Len = %d, want %d", s.Len(), want)
			}
		})
	}
}

func TestReplay(t *testing.T) {
	// Ring of 8 after 20 events: holds 13..20. Odd seqs are tool events.
	s := newTestStream(events.WithRingSize(8))
	for i := 1; i <= 20; i++ {
		if i%2 == 1 {
			s.Emit(&eventsv1.ToolExecutionEnd{Name: "sleep"})
		} else {
			s.Emit(&eventsv1.MessageDelta{})
		}
	}
	tests := []struct {
		name   string
		since  uint64
		filter events.Filter
		want   []string
	}{
		{"since inside the ring", 15, events.Filter{}, seqRange(16, 20)},
		{"since just before the ring", 12, events.Filter{}, seqRange(13, 20)},
		{"since before the ring", 5, events.Filter{}, append([]string{"lost(6-12)"}, seqRange(13, 20)...)},
		{"since 0", 0, events.Filter{}, append([]string{"lost(1-12)"}, seqRange(13, 20)...)},
		{"since last", 20, events.Filter{}, nil},
		{"since in the future", 25, events.Filter{}, nil},
		{"filtered", 14, events.MustFilter("tool_*"), []string{"15", "17", "19"}},
		{"filtered keeps events_lost", 10, events.MustFilter("message_delta"), []string{"lost(11-12)", "14", "16", "18", "20"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Replay(tt.since, tt.filter)
			if fmt.Sprint(seqs(got)) != fmt.Sprint(tt.want) {
				t.Errorf("Replay(%d) = %v, want %v", tt.since, seqs(got), tt.want)
			}
			for _, ev := range got {
				if ev.GetEventsLost() != nil && (ev.GetSeq() != 0 || ev.GetSession() != "s1" || ev.GetTsUnixNano() == 0) {
					t.Errorf("events_lost notice stamped %q/%d/%d, want s1, seq 0 and a time", ev.GetSession(), ev.GetSeq(), ev.GetTsUnixNano())
				}
			}
		})
	}
}

func TestSubscribeReplayThenLive(t *testing.T) {
	tests := []struct {
		name   string
		since  uint64
		filter events.Filter
		want   []string
	}{
		{"from the start", 0, events.Filter{}, seqRange(1, 8)},
		{"from the middle", 3, events.Filter{}, seqRange(4, 8)},
		{"live only", 5, events.Filter{}, seqRange(6, 8)},
		{"filtered", 0, events.MustFilter("agent_end"), []string{"5", "8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStream()
			publishDeltas(s, 4)
			s.Emit(&eventsv1.AgentEnd{})
			rec := eventstest.NewRecorder()
			s.Subscribe(rec, tt.since, tt.filter)
			publishDeltas(s, 2)
			s.Emit(&eventsv1.AgentEnd{})
			if got := seqs(rec.Events()); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSubscribeLostThenLive(t *testing.T) {
	s := newTestStream(events.WithRingSize(4))
	publishDeltas(s, 10)
	rec := eventstest.NewRecorder()
	s.Subscribe(rec, 2, events.Filter{})
	publishDeltas(s, 2)
	want := append([]string{"lost(3-6)"}, seqRange(7, 12)...)
	if got := seqs(rec.Events()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestUnsubscribe(t *testing.T) {
	s := newTestStream()
	a, b, c := eventstest.NewRecorder(), eventstest.NewRecorder(), eventstest.NewRecorder()
	s.Subscribe(a, 0, events.Filter{})
	s.Subscribe(b, 0, events.Filter{})
	s.Subscribe(c, 0, events.Filter{})
	publishDeltas(s, 1)
	if !s.Unsubscribe(b) {
		t.Error("Unsubscribe(b) = false")
	}
	if s.Unsubscribe(b) {
		t.Error("second Unsubscribe(b) = true")
	}
	publishDeltas(s, 1)
	if s.Subscribers() != 2 {
		t.Errorf("Subscribers = %d", s.Subscribers())
	}
	for name, tt := range map[string]struct {
		r    *eventstest.Recorder
		want []string
	}{"a": {a, seqRange(1, 2)}, "b": {b, seqRange(1, 1)}, "c": {c, seqRange(1, 2)}} {
		if got := seqs(tt.r.Events()); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s got %v, want %v", name, got, tt.want)
		}
	}
}

func TestSubscribeTwiceReplacesFilter(t *testing.T) {
	s := newTestStream()
	rec := eventstest.NewRecorder()
	s.Subscribe(rec, 0, events.MustFilter("agent_end"))
	s.Subscribe(rec, 0, events.MustFilter("message_delta"))
	publishDeltas(s, 1)
	s.Emit(&eventsv1.AgentEnd{})
	eventstest.ExpectTypes(t, rec.Events(), "message_delta")
	if s.Subscribers() != 1 {
		t.Errorf("Subscribers = %d", s.Subscribers())
	}
}

// TestSubscribeAgainNeverRepeats: a sink that subscribes again, with any
// since, gets no event twice and none out of order — only what it missed
// under its old filter since the last event it was given.
func TestSubscribeAgainNeverRepeats(t *testing.T) {
	tests := []struct {
		name        string
		first, then events.Filter
		since       uint64
		want        []string
	}{
		{"same filter from the start", events.Filter{}, events.Filter{}, 0, seqRange(1, 7)},
		{"same filter from the middle", events.Filter{}, events.Filter{}, 2, seqRange(1, 7)},
		{"wider filter", events.MustFilter("agent_end"), events.Filter{}, 0, []string{"3", "4", "5", "6", "7"}},
		{"narrower filter", events.Filter{}, events.MustFilter("agent_end"), 0, []string{"1", "2", "3", "4", "5", "6"}},
		{"since past the last given", events.MustFilter("agent_end"), events.Filter{}, 4, []string{"3", "5", "6", "7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStream()
			rec := eventstest.NewRecorder()
			s.Subscribe(rec, 0, tt.first)
			publishDeltas(s, 2)
			s.Emit(&eventsv1.AgentEnd{}) // 3
			publishDeltas(s, 2)          // 4, 5
			s.Subscribe(rec, tt.since, tt.then)
			s.Emit(&eventsv1.AgentEnd{}) // 6
			publishDeltas(s, 1)          // 7
			got := seqs(rec.Events())
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReplayIsWhatWasPublished checks that a replayed event, which the
// ring makes again from the payload and time it kept, equals the event
// subscribers were given live: session, seq, time and payload, before
// and after the ring wraps and after a Trim.
func TestReplayIsWhatWasPublished(t *testing.T) {
	s := newTestStream(events.WithRingSize(8))
	rec := eventstest.NewRecorder()
	s.Subscribe(rec, 0, events.Filter{})
	check := func(when string) {
		t.Helper()
		live := rec.Events()
		replayed := s.Replay(s.LastSeq()-uint64(s.Len()), events.Filter{})
		if len(replayed) != s.Len() {
			t.Fatalf("%s: replayed %d events, want %d", when, len(replayed), s.Len())
		}
		for i, ev := range replayed {
			want := live[len(live)-len(replayed)+i]
			if !proto.Equal(ev, want) {
				t.Errorf("%s: replayed %v, published %v", when, ev, want)
			}
			if ev == want {
				t.Errorf("%s: replay handed out the published Event itself", when)
			}
		}
	}
	s.Emit(&eventsv1.SessionCreated{Model: "script:demo"})
	s.Emit(&eventsv1.StateChanged{From: "idle", To: "running"})
	s.Emit(&eventsv1.ToolExecutionEnd{Name: "echo", CallId: "c-1", Ok: true, Result: "ping"})
	check("partly filled")
	publishDeltas(s, 11)
	check("wrapped")
	s.Trim(3)
	check("trimmed")
}

// TestRingKeepsNoEvent checks that the ring keeps a published event's
// payload and time but not the Event itself (96 bytes with its oneof
// wrapper), which the collector takes once the subscribers let it go.
func TestRingKeepsNoEvent(t *testing.T) {
	s := newTestStream()
	ev := events.New(&eventsv1.MessageDelta{Delta: "kept"})
	s.Publish(ev)
	collected := make(chan struct{})
	runtime.AddCleanup(ev, func(c chan struct{}) { close(c) }, collected)
	ev = nil
	// A cleanup runs on a goroutine of its own after the collection that
	// found its object unreachable: collect until it has run, for up to
	// 10 s on a busy machine (at once when the ring lets the Event go).
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		select {
		case <-collected:
		case <-time.After(10 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("the published Event is still reachable: the ring keeps it")
			}
			continue
		}
		break
	}
	got := s.Replay(0, events.Filter{})
	if len(got) != 1 || got[0].GetMessageDelta().GetDelta() != "kept" || got[0].GetSeq() != 1 {
		t.Fatalf("Replay(0) = %v, want the delta \"kept\" with seq 1", got)
	}
}

func TestTrim(t *testing.T) {
	s := newTestStream(events.WithRingSize(16))
	publishDeltas(s, 20)
	s.Trim(3)
	if s.Len() != 3 {
		t.Fatalf("Len after Trim(3) = %d", s.Len())
	}
	if got, want := seqs(s.Replay(0, events.Filter{})), append([]string{"lost(1-17)"}, seqRange(18, 20)...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Replay after Trim = %v, want %v", got, want)
	}
	publishDeltas(s, 30)
	if got, want := seqs(s.Replay(30, events.Filter{})), append([]string{"lost(31-34)"}, seqRange(35, 50)...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Replay after growing again = %v, want %v", got, want)
	}
	s.Trim(0)
	if got := seqs(s.Replay(49, events.Filter{})); fmt.Sprint(got) != "[lost(50-50)]" {
		t.Errorf("Replay after Trim(0) = %v", got)
	}
}

// TestIdleStreamMemory checks the idle-session budget (≤ 8 KiB in all,
// the targets of docs/benchmarks.md): a stream that has published a handful of events must cost
// a small fraction of it.
func TestIdleStreamMemory(t *testing.T) {
	const n = 2000
	streams := make([]*events.Stream, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range streams {
		s := events.NewStream(fmt.Sprintf("session-%06d", i))
		s.Emit(&eventsv1.SessionCreated{Model: "script:demo.json"})
		s.Emit(&eventsv1.StateChanged{From: "idle", To: "idle"})
		streams[i] = s
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perStream := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	t.Logf("%.0f bytes per stream with 2 events", perStream)
	if perStream > 1024 {
		t.Errorf("%.0f bytes per idle stream, want ≤ 1024", perStream)
	}
	runtime.KeepAlive(streams)
}
