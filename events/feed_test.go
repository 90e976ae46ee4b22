package events_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// joinFeed attaches a reader of f to s as the session actor does: the
// replay after since and the live events after it, in one step.
func joinFeed(s *events.Stream, f *events.Feed, since uint64, filter events.Filter) *events.FeedReader {
	r := events.NewFeedReader(filter, 0)
	f.Join(r, s.Replay(since, filter), s.LastSeq()+1)
	return r
}

// newFeed returns a feed of size subscribed to s's live events.
func newFeed(s *events.Stream, size int) *events.Feed {
	f := events.NewFeed(s.Session(), size)
	s.Subscribe(f, s.LastSeq(), events.Filter{})
	return f
}

// readNow reads what r has without waiting, and the error that ended it.
func readNow(r *events.FeedReader) ([]*eventsv1.Event, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out []*eventsv1.Event
	for {
		ev, err := r.Next(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestFeedReplayThenLive(t *testing.T) {
	s := newTestStream()
	publishDeltas(s, 5)
	f := newFeed(s, 16)
	r := joinFeed(s, f, 2, events.Filter{})
	publishDeltas(s, 3)
	got, err := readNow(r)
	if want := seqRange(3, 8); fmt.Sprint(seqs(got)) != fmt.Sprint(want) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, %v; want %v, context.Canceled", seqs(got), err, want)
	}
	// A reader that joins later starts where it asks.
	late := joinFeed(s, f, 8, events.Filter{})
	publishDeltas(s, 1)
	if got, _ := readNow(late); fmt.Sprint(seqs(got)) != "[9]" {
		t.Fatalf("late reader got %v, want [9]", seqs(got))
	}
	if got, _ := readNow(r); fmt.Sprint(seqs(got)) != "[9]" {
		t.Fatalf("first reader got %v, want [9]", seqs(got))
	}
}

func TestFeedFilter(t *testing.T) {
	s := newTestStream()
	f := newFeed(s, 16)
	filter, err := events.NewFilter([]string{"agent_end"})
	if err != nil {
		t.Fatal(err)
	}
	r := joinFeed(s, f, 0, filter)
	publishDeltas(s, 2)
	s.Emit(&eventsv1.AgentEnd{RunId: "r-1"})
	publishDeltas(s, 2)
	if got, _ := readNow(r); fmt.Sprint(seqs(got)) != "[3]" {
		t.Fatalf("got %v, want the agent_end alone, [3]", seqs(got))
	}
}

// TestFeedLost: a reader further behind than the ring is told what it
// lost, exactly, then reads on from the oldest event held.
func TestFeedLost(t *testing.T) {
	tests := []struct {
		name      string
		size      int
		published int
		grow      int // Grow to this after half the events, 0 for none
		want      []string
	}{
		{name: "within the ring", size: 8, published: 8, want: seqRange(1, 8)},
		{name: "one over", size: 8, published: 9, want: append([]string{"lost(1-1)"}, seqRange(2, 9)...)},
		{name: "far behind", size: 4, published: 100, want: append([]string{"lost(1-96)"}, seqRange(97, 100)...)},
		{name: "grown ring keeps what it held", size: 4, published: 8, grow: 16,
			want: append([]string{"lost(1-2)"}, seqRange(3, 8)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStream()
			f := newFeed(s, tt.size)
			r := joinFeed(s, f, 0, events.Filter{})
			for i := range tt.published {
				if tt.grow > 0 && i == tt.published/2+2 {
					f.Grow(tt.grow)
				}
				publishDeltas(s, 1)
			}
			got, _ := readNow(r)
			if fmt.Sprint(seqs(got)) != fmt.Sprint(tt.want) {
				t.Fatalf("got %v\nwant %v", seqs(got), tt.want)
			}
			if lost := got[0].GetEventsLost(); lost != nil && (got[0].GetSession() != "s1" || got[0].GetTsUnixNano() != got[1].GetTsUnixNano()) {
				t.Fatalf("notice %v: want session s1 and the time of the event that follows", got[0])
			}
		})
	}
}

func TestFeedClose(t *testing.T) {
	s := newTestStream()
	f := newFeed(s, 16)
	r := joinFeed(s, f, 0, events.Filter{})
	publishDeltas(s, 2)
	f.Close()
	publishDeltas(s, 1) // after Close: not delivered
	got, err := r.Next(context.Background())
	if err != nil || got.GetSeq() != 1 {
		t.Fatalf("first read after Close: %v, %v", got, err)
	}
	if got, err := readNow(r); fmt.Sprint(seqs(got)) != "[2]" || err != io.EOF {
		t.Fatalf("then %v, %v; want [2], io.EOF", seqs(got), err)
	}
}

// TestFeedWakes: a reader waiting in Next is woken by an event, by its
// Close and by the feed's, and gives up with its context.
func TestFeedWakes(t *testing.T) {
	s := newTestStream()
	f := newFeed(s, 16)
	waiting := func(r *events.FeedReader, ctx context.Context) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := r.Next(ctx)
			done <- err
		}()
		return done
	}
	wait := func(name string, done chan error, want error) {
		t.Helper()
		select {
		case err := <-done:
			if !errors.Is(err, want) {
				t.Fatalf("%s: Next returned %v, want %v", name, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Next still waits", name)
		}
	}
	byEvent := waiting(joinFeed(s, f, 0, events.Filter{}), context.Background())
	publishDeltas(s, 1)
	wait("an event", byEvent, nil)

	closed := joinFeed(s, f, s.LastSeq(), events.Filter{})
	byClose := waiting(closed, context.Background())
	closed.Close()
	wait("its Close", byClose, io.EOF)

	ctx, cancel := context.WithCancel(context.Background())
	byCtx := waiting(joinFeed(s, f, s.LastSeq(), events.Filter{}), ctx)
	cancel()
	wait("its context", byCtx, context.Canceled)

	byFeed := waiting(joinFeed(s, f, s.LastSeq(), events.Filter{}), context.Background())
	f.Close()
	wait("the feed's Close", byFeed, io.EOF)
}

// After DeferWakes a delivery leaves a waiting reader asleep until Flush,
// or until the releaseEvery-th event: a burst costs one wake-up.
func TestFeedDeferredWakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestStream()
		f := newFeed(s, 256)
		f.DeferWakes()
		r := joinFeed(s, f, 0, events.Filter{})
		got := make(chan uint64, 1)
		next := func() {
			go func() {
				ev, err := r.Next(context.Background())
				if err != nil {
					t.Errorf("Next: %v", err)
				}
				got <- ev.GetSeq()
			}()
			synctest.Wait()
		}
		asleep := func(when string) {
			t.Helper()
			synctest.Wait()
			select {
			case seq := <-got:
				t.Fatalf("%s: the reader woke and read %d", when, seq)
			default:
			}
		}
		woke := func(when string, want uint64) {
			t.Helper()
			synctest.Wait()
			select {
			case seq := <-got:
				if seq != want {
					t.Fatalf("%s: read %d, want %d", when, seq, want)
				}
			default:
				t.Fatalf("%s: the reader still waits", when)
			}
		}

		next()
		publishDeltas(s, 1)
		asleep("after a delivery")
		f.Flush()
		woke("after Flush", 1)

		next()
		publishDeltas(s, 62) // seqs 2..63
		asleep("after 62 deliveries")
		publishDeltas(s, 1) // seq 64
		woke("at the 64th event", 2)

		f.Flush() // nobody waits: nothing to wake
		next()
		woke("with events there", 3)
		f.Close()
	})
}

func TestFeedLeave(t *testing.T) {
	s := newTestStream()
	f := newFeed(s, 16)
	a, b := joinFeed(s, f, 0, events.Filter{}), joinFeed(s, f, 0, events.Filter{})
	other := events.NewFeed("s1", 16)
	if f.Leave(a) || f.Leave(a) {
		t.Fatal("the feed has no reader left after one of two left (twice)")
	}
	// Leaving another feed (the session's earlier one) does not count b
	// out of f.
	other.Leave(b)
	if !f.Leave(b) {
		t.Fatal("the feed still has readers after both left")
	}
}

// TestFeedManyReaders: readers on goroutines of their own, while the
// stream publishes, each get every event, in order, once.
func TestFeedManyReaders(t *testing.T) {
	const readers, total = 8, 20_000
	s := newTestStream()
	f := newFeed(s, total) // none falls behind
	rs := make([]*events.FeedReader, readers)
	for i := range rs {
		rs[i] = joinFeed(s, f, 0, events.Filter{})
	}
	var wg sync.WaitGroup
	errs := make([]error, readers)
	for i, r := range rs {
		wg.Go(func() {
			var want uint64 = 1
			for {
				ev, err := r.Next(context.Background())
				if err == io.EOF {
					if want != total+1 {
						errs[i] = fmt.Errorf("ended after seq %d, want %d", want-1, total)
					}
					return
				}
				if err != nil || ev.GetSeq() != want {
					errs[i] = fmt.Errorf("read %v, %v; want seq %d", ev, err, want)
					return
				}
				want++
			}
		})
	}
	publishDeltas(s, total)
	f.Close()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("reader %d: %v", i, err)
		}
	}
}

// TestFeedDeliverAllocatesNothing guards the lever of the feed: handing
// it an event allocates nothing, however many readers have joined (none
// waits here; a wake-up is one channel for all of them).
func TestFeedDeliverAllocatesNothing(t *testing.T) {
	for _, readers := range []int{0, 1, 100} {
		f := events.NewFeed("s1", 1024)
		for range readers {
			f.Join(events.NewFeedReader(events.Filter{}, 0), nil, 1)
		}
		evs := make([]*eventsv1.Event, 1000)
		for i := range evs {
			evs[i] = events.New(&eventsv1.MessageDelta{Delta: "x"})
			evs[i].Seq = uint64(i + 1)
		}
		i := 0
		if n := testing.AllocsPerRun(len(evs)-1, func() { f.Deliver(evs[i]); i++ }); n != 0 {
			t.Errorf("with %d readers, Deliver allocates %v times per event, want 0", readers, n)
		}
	}
}

// TestFeedReplayCutToTheBuffer: a replay longer than the reader's buffer
// is cut to it, as a Channel's is; the next live event brings the notice
// of what was cut, unless the feed holds it still.
func TestFeedReplayCutToTheBuffer(t *testing.T) {
	t.Run("a new feed", func(t *testing.T) {
		s := newTestStream()
		publishDeltas(s, 10)
		f := newFeed(s, 16)
		r := events.NewFeedReader(events.Filter{}, 4)
		f.Join(r, s.Replay(0, events.Filter{}), s.LastSeq()+1)
		if got, _ := readNow(r); fmt.Sprint(seqs(got)) != fmt.Sprint(seqRange(1, 4)) {
			t.Fatalf("before a live event: %v, want 1-4", seqs(got))
		}
		publishDeltas(s, 1)
		if got, _ := readNow(r); fmt.Sprint(seqs(got)) != "[lost(5-10) 11]" {
			t.Fatalf("after a live event: %v, want [lost(5-10) 11]", seqs(got))
		}
	})
	t.Run("a feed that holds the rest", func(t *testing.T) {
		s := newTestStream()
		f := newFeed(s, 16)
		publishDeltas(s, 10)
		r := events.NewFeedReader(events.Filter{}, 4)
		f.Join(r, s.Replay(0, events.Filter{}), s.LastSeq()+1)
		// Past the replay it reads on from the feed, within its buffer:
		// the newest 4.
		if got, _ := readNow(r); fmt.Sprint(seqs(got)) != "[1 2 3 4 lost(5-6) 7 8 9 10]" {
			t.Fatalf("got %v, want [1 2 3 4 lost(5-6) 7 8 9 10]", seqs(got))
		}
	})
}

// TestFeedKeepsWhatItsReadersNeed: once its readers have read past them,
// the feed lets go of events (every releaseEvery events), as channels
// that were read hold nothing: a feed of thousands of slots would
// otherwise keep that many events of a session alive.
func TestFeedKeepsWhatItsReadersNeed(t *testing.T) {
	s := newTestStream()
	f := newFeed(s, 4096)
	fast, slow := joinFeed(s, f, 0, events.Filter{}), joinFeed(s, f, 0, events.Filter{})
	publishDeltas(s, 1000)
	readNow(fast)
	publishDeltas(s, 24) // a look at the readers at seq 1024
	if held := events.FeedHeld(f); held != 1024 {
		t.Fatalf("with a reader that read nothing the ring holds %d events, want all 1024", held)
	}
	readNow(slow)
	readNow(fast)
	publishDeltas(s, 64) // the next look, at 1088
	if held := events.FeedHeld(f); held > 64 {
		t.Fatalf("with both readers caught up the ring still holds %d events, want at most 64", held)
	}
	if f.Leave(slow) {
		t.Fatal("the feed has no reader left after one of two left")
	}
	publishDeltas(s, 1000)
	readNow(fast)
	publishDeltas(s, 64)
	if held := events.FeedHeld(f); held > 64 {
		t.Fatalf("after the slow reader left the ring holds %d events, want at most 64", held)
	}
}

// TestFeedReaderBuffer: a reader more than its buffer behind is told so
// and skipped to its buffer's worth of the newest events, even when the
// feed holds more for a reader with a larger buffer.
func TestFeedReaderBuffer(t *testing.T) {
	s := newTestStream()
	f := newFeed(s, 64)
	small := events.NewFeedReader(events.Filter{}, 4)
	f.Join(small, nil, s.LastSeq()+1)
	large := joinFeed(s, f, 0, events.Filter{})
	publishDeltas(s, 10)
	if got, _ := readNow(small); fmt.Sprint(seqs(got)) != "[lost(1-6) 7 8 9 10]" {
		t.Fatalf("the reader of buffer 4 got %v, want [lost(1-6) 7 8 9 10]", seqs(got))
	}
	if got, _ := readNow(large); fmt.Sprint(seqs(got)) != fmt.Sprint(seqRange(1, 10)) {
		t.Fatalf("the reader without a bound got %v, want 1-10", seqs(got))
	}
	publishDeltas(s, 4)
	if got, _ := readNow(small); fmt.Sprint(seqs(got)) != "[11 12 13 14]" {
		t.Fatalf("then %v, want [11 12 13 14]", seqs(got))
	}
}
