package tack_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// BenchmarkEventThroughput measures events delivered from one session that
// streams as fast as the model can — one turn of b.N one-character chunks,
// no delays — to 1 and to 10 channel subscribers (default buffer, 1024),
// each drained by its own goroutine. One op is one message_delta published.
//
//   - events/s: message_delta events received, summed over subscribers, per
//     second (each subscriber gets at most published/s);
//   - published/s: message_delta events the session published per second;
//   - lost-frac: the share of the session's events (all types) the
//     subscribers did not receive (a reader that falls more than its
//     buffer behind is skipped ahead and told so with events_lost).
//
// buffer=65536 repeats the run with subscribers that never fall behind by
// more than their buffer, to separate the session's pace from the readers'.
// read= repeats it with Readers (Session.Read), which share one buffer,
// instead of channel subscriptions.
//
// Target (docs/benchmarks.md): ≥ 1M delta events/s delivered to subscribers on 2 cores.
func BenchmarkEventThroughput(b *testing.B) {
	defer settle(b)
	for _, shared := range []bool{false, true} {
		for _, buffer := range []int{0, 65536} {
			for _, subs := range []int{1, 10} {
				name := fmt.Sprintf("subscribers=%d", subs)
				if buffer > 0 {
					name += fmt.Sprintf("/buffer=%d", buffer)
				}
				if shared {
					name = "read/" + name
				}
				b.Run(name, func(b *testing.B) { benchThroughput(b, subs, buffer, shared) })
			}
		}
	}
}

// throughputReader is one subscriber of the throughput benchmark: a channel
// subscription, or a Reader.
type throughputReader struct {
	// next returns the next event, false at the end.
	next  func() (*eventsv1.Event, bool)
	close func() error
	// ownEnd is set for a reader, which reads up to agent_end and stops
	// there itself: it cannot miss it, the newest event it is skipped to.
	ownEnd bool
}

func followThroughput(b *testing.B, s *tack.Session, buffer int, shared bool) throughputReader {
	if !shared {
		sub := subscribe(b, s, buffer)
		return throughputReader{next: func() (*eventsv1.Event, bool) { ev, ok := <-sub.C; return ev, ok }, close: sub.Close}
	}
	r, err := s.Read(context.Background(), tack.SubscribeOptions{Buffer: buffer})
	if err != nil {
		b.Fatal(err)
	}
	next := func() (*eventsv1.Event, bool) {
		ev, err := r.Next(context.Background())
		return ev, err == nil
	}
	return throughputReader{next: next, close: r.Close, ownEnd: true}
}

// readerCount is what one throughput subscriber saw.
type readerCount struct {
	deltas, received int64
}

func benchThroughput(b *testing.B, subs, buffer int, shared bool) {
	rt := newBenchRuntime(b)
	script := benchScript{Turns: []benchTurn{{Text: strings.Repeat("x", b.N), ChunkSize: 1}}}.json(b)
	s := spawn(b, rt, script)
	ctx := context.Background()
	// A control subscription sees the run end. A lossy channel subscriber
	// cannot: the agent_end it misses is reported only with a later event,
	// and there is none.
	control, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}, Buffer: 4})
	if err != nil {
		b.Fatal(err)
	}
	counts := make([]readerCount, subs)
	readers := make([]throughputReader, subs)
	var wg sync.WaitGroup
	for i := range subs {
		f := followThroughput(b, s, buffer, shared)
		readers[i] = f
		// Skip what happened before the run (session_created).
		for ev, ok := f.next(); ok && ev.GetSessionCreated() == nil; ev, ok = f.next() {
		}
		wg.Go(func() {
			c := &counts[i]
			for ev, ok := f.next(); ok; ev, ok = f.next() {
				switch {
				case ev.GetMessageDelta() != nil:
					c.deltas++
				case ev.GetEventsLost() != nil:
					continue
				}
				c.received++
				if f.ownEnd && ev.GetAgentEnd() != nil {
					return
				}
			}
		})
	}
	b.ResetTimer()
	prompt(b, s, "stream")
	end := waitFor(b, control.C, func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	// Closing a subscription closes its channel after what it holds: each
	// reader drains its backlog, then stops. A Reader stops at agent_end.
	for _, f := range readers {
		if !f.ownEnd {
			if err := f.close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	wg.Wait()
	b.StopTimer()
	for _, f := range readers {
		if f.ownEnd {
			if err := f.close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Each reader was offered the events after session_created (seq 1),
	// up to agent_end.
	offered := int64(end.GetSeq()-1) * int64(subs)
	var total readerCount
	for _, c := range counts {
		total.deltas += c.deltas
		total.received += c.received
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(total.deltas)/sec, "events/s")
	b.ReportMetric(float64(b.N)/sec, "published/s")
	b.ReportMetric(float64(offered-total.received)/float64(offered), "lost-frac")
}
