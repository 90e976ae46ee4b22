package metrics_test

import (
	"testing"
	"time"

	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/metrics"
)

// BenchmarkObserverTurn is what the observer is told in one turn of the
// runtime's BenchmarkTurnOverhead (a model request that calls one tool):
// three state changes, the response's tokens and the tool's duration. The
// sessions of b.RunParallel share one Metrics, as a runtime's do.
func BenchmarkObserverTurn(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.StateChanged(fsm.Idle, fsm.Running)
			m.Tokens(1200, 40)
			m.StateChanged(fsm.Running, fsm.ExecutingTools)
			m.ToolDone("echo", 30*time.Microsecond, true)
			m.StateChanged(fsm.ExecutingTools, fsm.Idle)
		}
	})
}
