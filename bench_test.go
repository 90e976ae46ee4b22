package tack_test

// Benchmarks of the runtime against the targets of docs/benchmarks.md: heap per idle session,
// runtime overhead per turn, event throughput to subscribers (this file),
// abort delivery and steering latency (bench_interrupt_test.go). Figures
// and the commands that produce them are in docs/benchmarks.md.
//
// A smoke pass of every benchmark, once each, takes well under a minute:
//
//	go test -run '^$' -bench . -benchtime=1x .
//
// -short drops the largest sizes (100k idle sessions, 1,000 aborting
// sessions).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/metrics"
)

// benchWait bounds every wait of a benchmark, so a regression fails the
// benchmark instead of hanging it.
const benchWait = 30 * time.Second

// settle waits until no goroutine of the runtime is left: the tools a
// benchmark abandoned, and protoactor's dead-letter throttle, which lives
// for a second after a message reaches a stopped session. The package's
// TestMain checks for leaked goroutines after the benchmarks, so each
// top-level benchmark settles before it returns (its sub-benchmarks have
// closed their runtimes by then).
func settle(b *testing.B) {
	b.Helper()
	buf := make([]byte, 1<<20)
	eventually.Within(b, stubbornMS*time.Millisecond+5*time.Second, func() error {
		n := runtime.Stack(buf, true)
		for n == len(buf) {
			buf = make([]byte, 2*len(buf))
			n = runtime.Stack(buf, true)
		}
		// The first goroutine is this one.
		var left []string
		for _, g := range strings.Split(string(buf[:n]), "\n\n")[1:] {
			if strings.Contains(g, "github.com/tack-run/tack/") || strings.Contains(g, "protoactor-go") {
				left = append(left, g)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("%d runtime goroutines still running, the first:\n%s", len(left), left[0])
		}
		return nil
	})
}

// newBenchRuntime returns a runtime that the benchmark closes at its end.
func newBenchRuntime(b *testing.B, opts ...tack.Option) *tack.Runtime {
	b.Helper()
	rt, err := tack.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rt.Close)
	return rt
}

// benchScript is an inline scripted model (docs/protocol.md#the-scripted-model).
type benchScript struct {
	Turns         []benchTurn `json:"turns"`
	WhenExhausted string      `json:"when_exhausted,omitempty"`
}

type benchTurn struct {
	Text         string          `json:"text,omitempty"`
	ChunkSize    int             `json:"chunk_size,omitempty"`
	ChunkDelayMS int64           `json:"chunk_delay_ms,omitempty"`
	ToolCalls    []benchToolCall `json:"tool_calls,omitempty"`
}

type benchToolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

func (s benchScript) json(b *testing.B) json.RawMessage {
	b.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func spawn(b *testing.B, rt *tack.Runtime, script json.RawMessage) *tack.Session {
	b.Helper()
	s, err := rt.Spawn(tack.SessionConfig{Script: script})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func subscribe(b *testing.B, s *tack.Session, buffer int) *tack.Subscription {
	b.Helper()
	sub, err := s.Subscribe(context.Background(), tack.SubscribeOptions{Buffer: buffer})
	if err != nil {
		b.Fatal(err)
	}
	return sub
}

func prompt(b *testing.B, s *tack.Session, text string) {
	b.Helper()
	if _, err := s.Prompt(context.Background(), text); err != nil {
		b.Fatal(err)
	}
}

// heapAlloc returns the live heap after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// percentile returns the p-th percentile (0 < p ≤ 100, nearest rank) of
// sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// reportLatencies reports p50/p99/max of samples in µs.
func reportLatencies(b *testing.B, samples []time.Duration, withMax bool) {
	b.Helper()
	slices.Sort(samples)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(percentile(samples, 50)), "p50-µs")
	b.ReportMetric(us(percentile(samples, 99)), "p99-µs")
	if withMax {
		b.ReportMetric(us(samples[len(samples)-1]), "max-µs")
	}
	b.ReportMetric(float64(len(samples)), "samples")
}

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

// runToEnd runs one prompt on s and waits for its agent_end.
func runToEnd(b *testing.B, s *tack.Session) {
	b.Helper()
	ctx := context.Background()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}, Buffer: 4})
	if err != nil {
		b.Fatal(err)
	}
	prompt(b, s, "hi")
	waitFor(b, sub.C, func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	if err := sub.Close(); err != nil {
		b.Fatal(err)
	}
}

// waitFor reads c until match accepts an event.
func waitFor(b *testing.B, c <-chan *eventsv1.Event, match func(*eventsv1.Event) bool) *eventsv1.Event {
	b.Helper()
	timeout := time.NewTimer(benchWait)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-c:
			if !ok {
				b.Fatal("subscription closed")
			}
			if match(ev) {
				return ev
			}
		case <-timeout.C:
			b.Fatal("timed out waiting for an event")
		}
	}
}

// turnsPerRun is the length of a BenchmarkTurnOverhead run: toolTurns
// turns that each call echo, then a final text answer. A run commits
// runMessages messages: the prompt, 10 × (assistant + tool result), the
// answer.
const (
	toolTurns   = 10
	turnsPerRun = toolTurns + 1
	runMessages = 2 + 2*toolTurns
)

// BenchmarkTurnOverhead measures the runtime's cost per turn with a
// zero-latency scripted model: one op is a run of 10 turns that each call
// the echo tool, plus a final text answer (11 model requests). A turn is
// the whole loop — request, streamed response, tool call, result committed,
// next request — and the run is driven through the public API: Prompt,
// then read the subscription (one, unfiltered) until agent_end. ns/turn
// (wall), cpu-ns/turn (the process's CPU time, every thread, GC included),
// allocs/turn and B/turn divide the timed runs by 11; allocations count
// every goroutine's (session, model stream, tools, reader).
//
//   - history=0: one fresh session per run, spawned and subscribed before
//     the timer starts (a scripted model plays its turns once);
//   - history=N: the same run on a session whose history already holds
//     about N messages, to show how the per-turn cost grows with the
//     conversation. The history is filled outside the timer, by runs whose
//     one turn calls echo 50 times; a session serves timed runs until its
//     history has grown by 10%, then a fresh one takes over. The history
//     metric is the mean history length over the timed runs.
//
// Target (docs/benchmarks.md): ≥ 5× better than pi-agent-core for the same scenario
// (the peer harness compares; this gives Tack's side).
func BenchmarkTurnOverhead(b *testing.B) {
	defer settle(b)
	b.Run("history=0", func(b *testing.B) { benchTurns(b) })
	for _, h := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("history=%d", h), func(b *testing.B) { benchTurnsLong(b, h) })
	}
}

// BenchmarkTurnMetrics is BenchmarkTurnOverhead's history=0 run without
// and with Prometheus metrics (WithMetrics): the difference is what the
// sessions' observer costs per turn.
func BenchmarkTurnMetrics(b *testing.B) {
	defer settle(b)
	b.Run("metrics=off", func(b *testing.B) { benchTurns(b) })
	b.Run("metrics=on", func(b *testing.B) { benchTurns(b, tack.WithMetrics(metrics.New())) })
}

// runTurns appends the turns of one timed run.
func runTurns(turns []benchTurn) []benchTurn {
	for range toolTurns {
		turns = append(turns, benchTurn{ToolCalls: []benchToolCall{{Name: "echo", Args: json.RawMessage(`{"text":"ping"}`)}}})
	}
	return append(turns, benchTurn{Text: "done"})
}

// meter adds up the allocations and the process CPU time of the timed
// parts of a benchmark.
type meter struct {
	ms0           runtime.MemStats
	cpu0          time.Duration
	mallocs, size uint64
	cpu           time.Duration
	cpuOK         bool
}

func (m *meter) start(b *testing.B) {
	b.StartTimer()
	runtime.ReadMemStats(&m.ms0)
	m.cpu0, m.cpuOK = processCPU()
}

func (m *meter) stop(b *testing.B) {
	cpu1, _ := processCPU()
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	b.StopTimer()
	m.mallocs += ms1.Mallocs - m.ms0.Mallocs
	m.size += ms1.TotalAlloc - m.ms0.TotalAlloc
	m.cpu += cpu1 - m.cpu0
}

func benchTurns(b *testing.B, opts ...tack.Option) {
	script := benchScript{Turns: runTurns(nil)}.json(b)
	rt := newBenchRuntime(b, opts...)
	sessions := make([]*tack.Session, b.N)
	subs := make([]*tack.Subscription, b.N)
	for i := range b.N {
		sessions[i] = spawn(b, rt, script)
		subs[i] = subscribe(b, sessions[i], 256)
	}
	var m meter
	var events int
	runtime.GC()
	b.StopTimer()
	b.ResetTimer()
	m.start(b)
	for i := range b.N {
		prompt(b, sessions[i], "go")
		events += drainRun(b, subs[i].C)
	}
	m.stop(b)
	reportTurns(b, events, m)
}

func benchTurnsLong(b *testing.B, h int) {
	const warmCalls = 50
	const warmMessages = 1 + 1 + warmCalls + 1 // prompt, calls, results, answer
	warmRuns := (h + warmMessages - 1) / warmMessages
	history := warmRuns * warmMessages
	perSession := max(1, h/10/runMessages)
	var turns []benchTurn
	calls := make([]benchToolCall, warmCalls)
	for i := range calls {
		calls[i] = benchToolCall{Name: "echo", Args: json.RawMessage(`{"text":"ping"}`)}
	}
	for range warmRuns {
		turns = append(turns, benchTurn{ToolCalls: calls}, benchTurn{Text: "ok"})
	}
	for range perSession {
		turns = runTurns(turns)
	}
	script := benchScript{Turns: turns}.json(b)
	rt := newBenchRuntime(b)
	var m meter
	var events, histSum int
	b.StopTimer()
	b.ResetTimer()
	for done := 0; done < b.N; {
		s := spawn(b, rt, script)
		sub := subscribe(b, s, 1024)
		for range warmRuns {
			prompt(b, s, "warm up")
			drainRun(b, sub.C)
		}
		runtime.GC()
		m.start(b)
		for r := 0; r < perSession && done < b.N; r++ {
			prompt(b, s, "go")
			events += drainRun(b, sub.C)
			histSum += history + r*runMessages + runMessages/2
			done++
		}
		m.stop(b)
		s.Close()
	}
	reportTurns(b, events, m)
	b.ReportMetric(float64(histSum)/float64(b.N), "history")
}

// drainRun reads a run's events up to agent_end and counts them; it fails
// on a gap, an error or a run that did not complete.
func drainRun(b *testing.B, c <-chan *eventsv1.Event) int {
	b.Helper()
	n := 0
	end := waitFor(b, c, func(ev *eventsv1.Event) bool {
		n++
		if ev.GetEventsLost() != nil || ev.GetError() != nil {
			b.Fatalf("unexpected event %v", ev)
		}
		return ev.GetAgentEnd() != nil
	})
	if r := end.GetAgentEnd().GetReason(); r != "completed" {
		b.Fatalf("run ended %s", r)
	}
	return n
}

func reportTurns(b *testing.B, events int, m meter) {
	turns := float64(b.N * turnsPerRun)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/turns, "ns/turn")
	b.ReportMetric(float64(m.mallocs)/turns, "allocs/turn")
	b.ReportMetric(float64(m.size)/turns, "B/turn")
	b.ReportMetric(float64(events)/turns, "events/turn")
	if m.cpuOK {
		b.ReportMetric(float64(m.cpu.Nanoseconds())/turns, "cpu-ns/turn")
	}
}

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
