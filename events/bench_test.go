package events_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/liveheap"
)

// BenchmarkPublish publishes message_delta events to channel subscribers,
// each drained by its own goroutine. events/s counts published events,
// delivered/s the events the readers received (a reader that falls behind
// loses events rather than slowing the publisher; lost% says how many).
func BenchmarkPublish(b *testing.B) {
	for _, subs := range []int{0, 1, 10} {
		b.Run(fmt.Sprintf("subscribers=%d", subs), func(b *testing.B) {
			s := events.NewStream("s1")
			var received atomic.Int64
			var wg sync.WaitGroup
			chans := make([]*events.Channel, subs)
			for i := range chans {
				ch := events.NewChannel(1024)
				chans[i] = ch
				s.Subscribe(ch, 0, events.Filter{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := int64(0)
					for range ch.C() {
						n++
					}
					received.Add(n)
				}()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.Publish(events.NewMessageDelta("tok "))
			}
			b.StopTimer()
			for _, ch := range chans {
				s.Unsubscribe(ch)
				ch.Close()
			}
			wg.Wait()
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/sec, "events/s")
			if subs > 0 {
				b.ReportMetric(float64(received.Load())/sec, "delivered/s")
				b.ReportMetric(100*(1-float64(received.Load())/float64(b.N*subs)), "lost%")
			}
		})
	}
}

// BenchmarkPublishPaced measures delivery without loss: the publisher
// sends bursts of half a channel buffer and waits (yielding) until every
// reader has taken the burst, the way a session publishes at model speed.
// delivered/s counts events received by all readers together.
func BenchmarkPublishPaced(b *testing.B) {
	const buffer, burst = 1024, 512
	for _, subs := range []int{1, 10} {
		b.Run(fmt.Sprintf("subscribers=%d", subs), func(b *testing.B) {
			s := events.NewStream("s1")
			var wg sync.WaitGroup
			seen := make([]atomic.Uint64, subs) // last seq read per reader
			chans := make([]*events.Channel, subs)
			for i := range chans {
				ch := events.NewChannel(buffer)
				chans[i] = ch
				s.Subscribe(ch, 0, events.Filter{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ev := range ch.C() {
						seen[i].Store(ev.GetSeq())
					}
				}()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				s.Publish(events.NewMessageDelta("tok "))
				if i%burst != 0 && i != b.N {
					continue
				}
				for r := range seen {
					for seen[r].Load() < uint64(i) {
						runtime.Gosched()
					}
				}
			}
			b.StopTimer()
			for _, ch := range chans {
				s.Unsubscribe(ch)
				ch.Close()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N*subs)/b.Elapsed().Seconds(), "delivered/s")
		})
	}
}

// BenchmarkRingHeap reports the live heap a full ring costs per event it
// holds: 1,000 streams, each having published events.DefaultRingSize events of
// one kind (a streamed delta of a few characters, cut from a response
// body as a provider cuts it, or a state_changed), subscribers gone.
func BenchmarkRingHeap(b *testing.B) {
	body := strings.Repeat("Hello, world! ", events.DefaultRingSize)
	for _, kind := range []string{"message_delta", "state_changed"} {
		b.Run("event="+kind, func(b *testing.B) {
			const streams = 1000
			var perEvent float64
			for range b.N {
				ss := make([]*events.Stream, streams)
				before := liveheap.Bytes()
				for i := range ss {
					s := events.NewStream("session")
					for j := range events.DefaultRingSize {
						if kind == "message_delta" {
							s.Emit(&eventsv1.MessageDelta{Delta: body[j*14 : j*14+5]})
						} else {
							s.Emit(&eventsv1.StateChanged{From: "running", To: "streaming"})
						}
					}
					ss[i] = s
				}
				perEvent += float64(liveheap.Bytes()-before) / (streams * events.DefaultRingSize)
				runtime.KeepAlive(ss)
			}
			b.ReportMetric(perEvent/float64(b.N), "B/event")
		})
	}
}
