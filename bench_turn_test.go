package tack_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/cputime"
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/store/memory"
)

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

// BenchmarkTurnStore is BenchmarkTurnOverhead's history=0 run on a
// runtime with no store, with no store but parking (WithPassivateAfter:
// nothing is written while a session runs), with the in-memory store and
// with a SQLite file: the difference is what the store's writes cost per
// turn.
func BenchmarkTurnStore(b *testing.B) {
	defer settle(b)
	b.Run("store=none", func(b *testing.B) { benchTurns(b) })
	b.Run("store=none,parking", func(b *testing.B) { benchTurns(b, tack.WithPassivateAfter(time.Minute)) })
	b.Run("store=memory", func(b *testing.B) { benchTurns(b, tack.WithStore(memory.New())) })
	b.Run("store=sqlite", func(b *testing.B) { benchTurns(b, tack.WithStore(benchStore(b))) })
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
	m.cpu0, m.cpuOK = cputime.Process()
}

func (m *meter) stop(b *testing.B) {
	cpu1, _ := cputime.Process()
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
