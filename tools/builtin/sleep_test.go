package builtin_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

func TestSleep(t *testing.T) {
	const cancelAfter = 10 * time.Millisecond
	tests := []struct {
		name        string
		tool        tools.Tool
		ms          int
		cancel      bool // cancel after cancelAfter
		wantElapsed time.Duration
		want        tools.Result
	}{
		{name: "sleep runs out", tool: builtin.Sleep(), ms: 50,
			wantElapsed: 50 * time.Millisecond, want: tools.Result{Content: "slept 50 ms"}},
		{name: "sleep zero", tool: builtin.Sleep(), ms: 0,
			wantElapsed: 0, want: tools.Result{Content: "slept 0 ms"}},
		{name: "sleep stops when cancelled", tool: builtin.Sleep(), ms: 60_000, cancel: true,
			wantElapsed: cancelAfter, want: tools.Result{Content: "context canceled", IsError: true}},
		{name: "sleep_stubborn ignores cancellation", tool: builtin.SleepStubborn(), ms: 1000, cancel: true,
			wantElapsed: time.Second, want: tools.Result{Content: "slept 1000 ms"}},
		{name: "sleep_stubborn runs out", tool: builtin.SleepStubborn(), ms: 20,
			wantElapsed: 20 * time.Millisecond, want: tools.Result{Content: "slept 20 ms"}},
		{name: "sleep_immune runs out", tool: builtin.SleepImmune(), ms: 30,
			wantElapsed: 30 * time.Millisecond, want: tools.Result{Content: "slept 30 ms"}},
		{name: "sleep_immune honours its context", tool: builtin.SleepImmune(), ms: 60_000, cancel: true,
			wantElapsed: cancelAfter, want: tools.Result{Content: "context canceled", IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				start := time.Now()
				done := make(chan tools.Result, 1)
				go func() {
					args, _ := json.Marshal(map[string]int{"ms": tt.ms})
					done <- tools.Execute(ctx, tt.tool, args, nil)
				}()
				if tt.cancel {
					time.Sleep(cancelAfter)
					cancel()
				}
				got := <-done
				if elapsed := time.Since(start); elapsed != tt.wantElapsed {
					t.Errorf("returned after %v, want %v", elapsed, tt.wantElapsed)
				}
				if got != tt.want {
					t.Errorf("Execute = %+v, want %+v", got, tt.want)
				}
			})
		})
	}
}
