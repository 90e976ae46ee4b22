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
//
// Target (docs/benchmarks.md): ≥ 1M delta events/s delivered to subscribers on 2 cores.
func BenchmarkEventThroughput(b *testing.B) {
	defer settle(b)
	for _, buffer := range []int{0, 65536} {
		for _, subs := range []int{1, 10} {
			name := fmt.Sprintf("subscribers=%d", subs)
			if buffer > 0 {
				name += fmt.Sprintf("/buffer=%d", buffer)
			}
			b.Run(name, func(b *testing.B) { benchThroughput(b, subs, buffer) })
		}
	}
}

// readerCount is what one throughput subscriber saw.
type readerCount struct {
	deltas, received int64
}

func benchThroughput(b *testing.B, subs, buffer int) {
	rt := newBenchRuntime(b)
	script := benchScript{Turns: []benchTurn{{Text: strings.Repeat("x", b.N), ChunkSize: 1}}}.json(b)
	s := spawn(b, rt, script)
	ctx := context.Background()
	// A control subscription sees the run end. A lossy reader cannot: the
	// agent_end it misses is reported only with a later event, and there
	// is none.
	control, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}, Buffer: 4})
	if err != nil {
		b.Fatal(err)
	}
	counts := make([]readerCount, subs)
	readers := make([]*tack.Subscription, subs)
	var wg sync.WaitGroup
	for i := range subs {
		sub := subscribe(b, s, buffer)
		readers[i] = sub
		// Skip what happened before the run (session_created).
		waitFor(b, sub.C, func(ev *eventsv1.Event) bool { return ev.GetSessionCreated() != nil })
		wg.Go(func() {
			c := &counts[i]
			for ev := range sub.C {
				switch {
				case ev.GetMessageDelta() != nil:
					c.deltas++
				case ev.GetEventsLost() != nil:
					continue
				}
				c.received++
			}
		})
	}
	b.ResetTimer()
	prompt(b, s, "stream")
	end := waitFor(b, control.C, func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	// Closing a subscription closes its channel after what it holds: each
	// reader drains its backlog, then stops.
	for _, sub := range readers {
		if err := sub.Close(); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
	b.StopTimer()
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
