package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/store/sqlite"
)

// BenchmarkPassivation creates sessions in SQLite (TACK_BENCH_SESSIONS,
// default 20,000; each ran one prompt), lets them all passivate (a quiet
// time of 2 s), and reports the process's RSS and Go heap with every
// session loaded and once none is, and per op the time to wake one
// passivated session: get_state on it, which restores it from the store.
// Creating and passivating are not timed. Run with -benchtime Nx, N at
// most the number of sessions (further ops find loaded sessions):
//
//	TACK_BENCH_SESSIONS=100000 go test -run '^$' -bench Passivation -benchtime 1000x .
func BenchmarkPassivation(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("TACK_BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "tack.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	rt, err := tack.New(tack.WithStore(st), tack.WithNode("bench"), tack.WithPassivateAfter(2*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	base := heapAlloc()
	script := json.RawMessage(`{"turns":[{"text":"Hello, this is a short answer."}]}`)
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 32 {
		wg.Go(func() {
			for k := next.Add(1) - 1; k < int64(n); k = next.Add(1) - 1 {
				id := fmt.Sprintf("p%07d", k)
				s, err := rt.Spawn(tack.SessionConfig{ID: id, Script: script})
				if err == nil {
					_, err = s.Prompt(ctx, "hi")
				}
				if err != nil {
					b.Error(err)
					return
				}
				ids[k] = id
			}
		})
	}
	wg.Wait()
	created := time.Since(start)
	loadedRSS, loadedHeap := rssBytes(b), heapAlloc()
	for deadline := time.Now().Add(10 * time.Minute); len(rt.Sessions()) > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d sessions still loaded after 10 minutes", len(rt.Sessions()))
		}
	}
	debug.FreeOSMemory()
	idleRSS, idleHeap := rssBytes(b), heapAlloc()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s, err := rt.State(ctx, ids[i%n]); err != nil || s.MessageCount != 2 {
			b.Fatalf("wake %s: %v, %v", ids[i%n], s, err)
		}
	}
	b.StopTimer()
	mib := func(v uint64) float64 { return float64(v) / (1 << 20) }
	b.ReportMetric(float64(n), "sessions")
	b.ReportMetric(float64(n)/created.Seconds(), "created/s")
	b.ReportMetric(mib(loadedRSS), "MiB-RSS-loaded")
	b.ReportMetric(mib(idleRSS), "MiB-RSS-passivated")
	b.ReportMetric(float64(loadedHeap-min(base, loadedHeap))/float64(n), "B-heap/loaded")
	b.ReportMetric(float64(idleHeap-min(base, idleHeap))/float64(n), "B-heap/passivated")
}

// rssBytes is the process's resident set size (Linux: /proc/self/statm).
func rssBytes(b *testing.B) uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skip("no /proc/self/statm: RSS is read on Linux only")
	}
	f := strings.Fields(string(data))
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}
