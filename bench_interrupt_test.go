package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// stubbornMS is how long the sleep_stubborn calls of BenchmarkAbortDelivery
// sleep. They ignore cancellation, so the benchmark waits for the last of
// them before it returns (see settle).
const stubbornMS = 2000

// BenchmarkAbortDelivery measures how long an abort takes to reach a
// subscriber: N sessions are busy, then every session is aborted — from 8
// goroutines at once when N > 1 — and each sample is the time from just
// before that session's Abort call to the moment its channel subscriber
// (unfiltered, default buffer, drained by its own goroutine) receives
// agent_abort.
//
//   - state=streaming: every session streams a 4,000-character text in
//     one-character chunks every 5 ms (20 s: all N streams stay live until
//     the aborts);
//   - state=tools-stubborn: every session is in executing_tools running
//     sleep_stubborn, which ignores cancellation.
//
// p50-µs, p99-µs and max-µs are the delivery latencies; pub-p99-µs is the
// p99 of the session's share: from just before Abort to the timestamp the
// session put on agent_abort when it published it.
//
// One op is one round: spawn, start, abort all, close. Latencies are pooled
// over the rounds. Target (docs/benchmarks.md): p99 < 1 ms with 1,000 sessions.
func BenchmarkAbortDelivery(b *testing.B) {
	defer settle(b) // the abandoned sleep_stubborn calls end stubbornMS after they started
	sizes := []int{1, 100, 1000}
	if testing.Short() {
		sizes = []int{1, 100}
	}
	stream := benchScript{Turns: []benchTurn{{Text: strings.Repeat("a", 4000), ChunkSize: 1, ChunkDelayMS: 5}}}
	stubborn := benchScript{Turns: []benchTurn{
		{ToolCalls: []benchToolCall{{Name: "sleep_stubborn", Args: json.RawMessage(fmt.Sprintf(`{"ms":%d}`, stubbornMS))}}},
		{Text: "done"},
	}}
	for _, v := range []struct {
		state  string
		script benchScript
		// busy tells the event after which a session is in the state
		// under test.
		busy func(*eventsv1.Event) bool
	}{
		{"streaming", stream, func(ev *eventsv1.Event) bool { return ev.GetMessageDelta() != nil }},
		{"tools-stubborn", stubborn, func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil }},
	} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("state=%s/sessions=%d", v.state, n), func(b *testing.B) {
				benchAbort(b, n, v.script.json(b), v.busy)
			})
		}
	}
}

func benchAbort(b *testing.B, n int, script json.RawMessage, busy func(*eventsv1.Event) bool) {
	rt := newBenchRuntime(b)
	var samples, published []time.Duration
	for range b.N {
		deliver, publish := abortRound(b, rt, n, script, busy)
		samples = append(samples, deliver...)
		published = append(published, publish...)
	}
	b.StopTimer()
	reportLatencies(b, samples, true)
	// How much of it is the session's: from before Abort to the moment the
	// session stamped agent_abort (its wall-clock ts), before delivery.
	slices.Sort(published)
	b.ReportMetric(float64(percentile(published, 99))/float64(time.Microsecond), "pub-p99-µs")
}

// abortRound spawns n sessions, makes them busy, aborts them all and
// returns the delivery latency of each agent_abort, and the time until the
// session published it.
func abortRound(b *testing.B, rt *tack.Runtime, n int, script json.RawMessage, busy func(*eventsv1.Event) bool) (deliver, publish []time.Duration) {
	b.Helper()
	base := time.Now()
	sent := make([]atomic.Int64, n)     // ns after base, just before Abort
	sentWall := make([]atomic.Int64, n) // the same, in Unix ns
	latency := make([]time.Duration, n) // written by reader i
	published := make([]time.Duration, n)
	sessions := make([]*tack.Session, n)
	var ready, aborted, done sync.WaitGroup
	ready.Add(n)
	aborted.Add(n)
	for i := range n {
		s := spawn(b, rt, script)
		sessions[i] = s
		sub := subscribe(b, s, 0)
		done.Go(func() {
			isBusy, isAborted := false, false
			for ev := range sub.C {
				if !isBusy && busy(ev) {
					isBusy = true
					ready.Done()
				}
				if !isAborted && ev.GetAgentAbort() != nil {
					latency[i] = time.Since(base) - time.Duration(sent[i].Load())
					published[i] = time.Duration(ev.GetTsUnixNano() - sentWall[i].Load())
					isAborted = true
					aborted.Done()
				}
			}
		})
	}
	for _, s := range sessions {
		prompt(b, s, "go")
	}
	waitGroup(b, &ready)
	// Let every stream settle into its 5 ms rhythm.
	time.Sleep(20 * time.Millisecond)

	workers := min(n, 8)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				now := time.Now()
				sentWall[i].Store(now.UnixNano())
				sent[i].Store(int64(now.Sub(base)))
				if err := sessions[i].Abort(context.Background(), tack.AbortOptions{}); err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	waitGroup(b, &aborted)
	for _, s := range sessions {
		s.Close()
	}
	done.Wait()
	return latency, published
}

// waitGroup waits for wg, failing the benchmark after benchWait.
func waitGroup(b *testing.B, wg *sync.WaitGroup) {
	b.Helper()
	c := make(chan struct{})
	go func() { wg.Wait(); close(c) }()
	select {
	case <-c:
	case <-time.After(benchWait):
		b.Fatal("timed out")
	}
}

// BenchmarkSteerLatency measures steering while a killable tool runs: the
// session is in executing_tools running sleep (60 s), and each sample is
// the time from just before Steer to the moment the subscriber (its own
// goroutine) receives the request_start of the next turn, whose request
// carries the steering text (steering_applied comes right before it; the
// benchmark checks). The script answers every request with the same sleep
// call, so one session serves many steers; it is replaced every 100 steers
// to keep its history short. One op is one steer.
func BenchmarkSteerLatency(b *testing.B) {
	script := benchScript{
		Turns:         []benchTurn{{ToolCalls: []benchToolCall{{Name: "sleep", Args: json.RawMessage(`{"ms":60000}`)}}}},
		WhenExhausted: "repeat_last",
	}.json(b)
	defer settle(b)
	b.Run("tool=sleep", func(b *testing.B) {
		rt := newBenchRuntime(b)
		samples := make([]time.Duration, 0, b.N)
		const perSession = 100
		for done := 0; done < b.N; done += perSession {
			samples = append(samples, steerSession(b, rt, script, min(perSession, b.N-done))...)
		}
		b.StopTimer()
		reportLatencies(b, samples, true)
	})
}

// steerSession starts a run on a fresh session and steers it k times,
// each time while its sleep tool runs.
func steerSession(b *testing.B, rt *tack.Runtime, script json.RawMessage, k int) []time.Duration {
	b.Helper()
	s := spawn(b, rt, script)
	sub := subscribe(b, s, 0)
	// The reader stamps the events the benchmark waits for as they arrive.
	type stamped struct {
		ev *eventsv1.Event
		at time.Time
	}
	marks := make(chan stamped, 16)
	var reader sync.WaitGroup
	reader.Go(func() {
		defer close(marks)
		applied := false
		for ev := range sub.C {
			switch {
			case ev.GetEventsLost() != nil:
				b.Errorf("events lost: %v", ev)
			case ev.GetSteeringApplied() != nil:
				applied = true
			case ev.GetToolExecutionStart() != nil:
				marks <- stamped{ev, time.Now()}
			case ev.GetRequestStart() != nil && ev.GetRequestStart().GetTurn() > 1:
				if !applied {
					b.Errorf("request_start of turn %d without steering_applied", ev.GetRequestStart().GetTurn())
				}
				applied = false
				marks <- stamped{ev, time.Now()}
			}
		}
	})
	defer reader.Wait() // runs after Close, which ends the subscription
	defer s.Close()
	next := func() stamped {
		select {
		case m, ok := <-marks:
			if !ok {
				b.Fatal("subscription closed")
			}
			return m
		case <-time.After(benchWait):
			b.Fatal("timed out")
		}
		panic("unreachable")
	}
	out := make([]time.Duration, 0, k)
	prompt(b, s, "go")
	for range k {
		if m := next(); m.ev.GetToolExecutionStart() == nil {
			b.Fatalf("got %v, want tool_execution_start", m.ev)
		}
		start := time.Now()
		if _, err := s.Steer(context.Background(), "change course", tack.SteerOptions{}); err != nil {
			b.Fatal(err)
		}
		m := next()
		if m.ev.GetRequestStart() == nil {
			b.Fatalf("got %v, want request_start", m.ev)
		}
		out = append(out, m.at.Sub(start))
	}
	return out
}
