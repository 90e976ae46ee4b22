package tack_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/sqlite"
)

// restoreSessions is how many stored sessions BenchmarkRestoreCrashed
// restores per op.
const restoreSessions = 10000

// BenchmarkRestoreCrashed measures the restore of 10,000 sessions a crash
// left in SQLite mid-run: each has a prompt, an assistant message whose
// tool call has no result, state executing_tools and run r-1. One op is a
// new runtime answering get_state for all of them, from 32 goroutines, as
// the first commands after a restart would: each is loaded, its call
// answered "interrupted: process restarted", its run ended, and the
// answer is the restored view (the write-back runs on in the background).
// Filling the store is not timed.
//
//	go test -run '^$' -bench RestoreCrashed -benchtime 1x .
func BenchmarkRestoreCrashed(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("tack-%d.db", i)))
		if err != nil {
			b.Fatal(err)
		}
		ids := fillCrashed(b, st, restoreSessions)
		rt, err := tack.New(tack.WithStore(st), tack.WithNode("bench"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				for k := next.Add(1) - 1; k < int64(len(ids)); k = next.Add(1) - 1 {
					s, err := rt.State(ctx, ids[k])
					if err != nil {
						b.Error(err)
						return
					}
					if s.State != "idle" || s.MessageCount != 3 {
						b.Errorf("%s restored as %s with %d messages, want idle with 3", ids[k], s.State, s.MessageCount)
						return
					}
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		rt.Close()
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(restoreSessions)*float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
}

// fillCrashed stores n sessions as a process that died while running a
// tool leaves them, from 32 goroutines.
func fillCrashed(b *testing.B, st store.Store, n int) []string {
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("r%05d", i)
	}
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < n; i += 32 {
				err := st.Create(ctx, ids[i], store.Config{Model: "script:demo"})
				if err == nil {
					err = st.Apply(ctx, ids[i], &store.Batch{
						Messages: []*eventsv1.Message{
							{Role: "user", Content: "list the files"},
							{Role: "assistant", Content: "Looking.", ToolCalls: []*eventsv1.ToolCall{{Id: "c-1", Name: "sleep", Args: &eventsv1.RawJSON{Json: []byte(`{"ms":30000}`)}}}},
						},
						State:    "executing_tools",
						EventSeq: 12,
						Volatile: &store.Volatile{RunID: "r-1", Counters: store.Counters{Runs: 1}},
					})
				}
				if err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return ids
}
