package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tack-run/tack"
)

// BenchmarkIdleSessionHeap measures the live heap one idle session costs:
// N sessions are spawned on a one-turn inline script and have processed
// their start (session_created), the handles are dropped, and the heap
// growth after a full GC is divided by N. The runtime's own structures
// (registry, actor process table) are part of the figure.
//
//   - state=fresh: a session that never ran and never had a subscriber;
//   - state=after-subscribe: a client subscribed with the default options
//     (buffer 1024) and unsubscribed again;
//   - state=after-run: a session that ran one prompt to completion (a
//     two-message history and its buffered events), watched by a small
//     filtered subscription that was closed afterwards.
//
// Target (docs/benchmarks.md): ≤ 8 KiB per idle session.
func BenchmarkIdleSessionHeap(b *testing.B) {
	defer settle(b)
	sizes := []int{10_000, 100_000}
	if testing.Short() {
		sizes = []int{1_000, 10_000}
	}
	script := benchScript{Turns: []benchTurn{{Text: "ok"}}}
	for _, state := range []string{"fresh", "after-subscribe", "after-run"} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("state=%s/sessions=%dk", state, n/1000), func(b *testing.B) {
				benchIdleHeap(b, n, state, script.json(b))
			})
		}
	}
}

func benchIdleHeap(b *testing.B, n int, state string, script json.RawMessage) {
	var perSession, spawnNS float64
	for range b.N {
		rt, err := tack.New()
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		// Warm up the runtime's shared structures with one session.
		warm := spawn(b, rt, script)
		if _, err := warm.State(ctx); err != nil {
			b.Fatal(err)
		}
		before := heapAlloc()
		start := time.Now()
		for range n {
			s := spawn(b, rt, script)
			switch state {
			case "after-subscribe":
				if err := subscribe(b, s, 0).Close(); err != nil {
					b.Fatal(err)
				}
			case "after-run":
				runToEnd(b, s)
			}
		}
		elapsed := time.Since(start)
		// Every session has started once it answers get_state (a mailbox
		// is processed in order).
		for _, id := range rt.Sessions() {
			s, err := rt.Session(id)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.State(ctx); err != nil {
				b.Fatal(err)
			}
		}
		after := heapAlloc()
		if got := len(rt.Sessions()); got != n+1 {
			b.Fatalf("%d sessions live, want %d", got, n+1)
		}
		perSession += (float64(after) - float64(before)) / float64(n)
		spawnNS += float64(elapsed.Nanoseconds()) / float64(n)
		rt.Close()
	}
	b.ReportMetric(perSession/float64(b.N), "B/session")
	// The time to spawn a session (and to subscribe or run it, by state).
	b.ReportMetric(spawnNS/float64(b.N), "ns/session")
}
