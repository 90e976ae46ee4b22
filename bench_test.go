package tack_test

// Benchmarks of the runtime against the targets of docs/benchmarks.md: heap per idle session
// (bench_idle_test.go), runtime overhead per turn (bench_turn_test.go),
// event throughput to subscribers (bench_throughput_test.go), abort
// delivery and steering latency (bench_interrupt_test.go); this file holds
// what they share. Figures and the commands that produce them are in
// docs/benchmarks.md.
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
	"testing"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
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

func spawn(b testing.TB, rt *tack.Runtime, script json.RawMessage) *tack.Session {
	b.Helper()
	s, err := rt.Spawn(tack.SessionConfig{Script: script})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func subscribe(b testing.TB, s *tack.Session, buffer int) *tack.Subscription {
	b.Helper()
	sub, err := s.Subscribe(context.Background(), tack.SubscribeOptions{Buffer: buffer})
	if err != nil {
		b.Fatal(err)
	}
	return sub
}

func prompt(b testing.TB, s *tack.Session, text string) {
	b.Helper()
	if _, err := s.Prompt(context.Background(), text); err != nil {
		b.Fatal(err)
	}
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

// runToEnd runs one prompt on s and waits for its agent_end.
func runToEnd(b testing.TB, s *tack.Session) {
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
func waitFor(b testing.TB, c <-chan *eventsv1.Event, match func(*eventsv1.Event) bool) *eventsv1.Event {
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
