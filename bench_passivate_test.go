package tack_test

import (
	"context"
	"encoding/json"
	"flag"
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
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/internal/liveheap"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/sqlite"
)

// BenchmarkPassivation creates sessions in SQLite (TACK_BENCH_SESSIONS,
// default 20,000), each of which runs one prompt, in a runtime that keeps
// them all loaded, and reads the process's RSS and Go heap. It then closes
// that runtime, opens one on the same file that passivates sessions quiet
// for 1 s, wakes them all (get_state), waits until every one has been
// passivated, and reads RSS and heap again. Per op it times waking one
// passivated session: get_state on it, which restores it from the store.
// Nothing before the ops is timed. Run with -benchtime Nx, N at most the
// number of sessions (further ops find loaded sessions):
//
//	TACK_BENCH_SESSIONS=100000 go test -run '^$' -bench Passivation -benchtime 1000x .
func BenchmarkPassivation(b *testing.B) {
	if fixedCountProbe(b) {
		return
	}
	n := benchSessions(20000)
	ctx := context.Background()
	st := benchStore(b)
	base := liveheap.Bytes()
	loaded, err := tack.New(tack.WithStore(st), tack.WithNode("bench"))
	if err != nil {
		b.Fatal(err)
	}
	ids, created := createSessions(b, loaded, n)
	eventually.Within(b, time.Minute, func() error {
		if s, err := loaded.State(ctx, ids[n-1]); err != nil || s.MessageCount != 2 {
			return fmt.Errorf("the last session's run did not end: %v, %v", s, err)
		}
		return nil
	})
	loadedRSS, loadedHeap := rssBytes(b), liveheap.Bytes()
	loaded.Close()

	rt, err := tack.New(tack.WithStore(st), tack.WithNode("bench"), tack.WithPassivateAfter(time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	parallel(b, n, func(k int) error {
		_, err := rt.State(ctx, ids[k])
		return err
	})
	idleRSS, idleHeap := waitPassivated(b, rt)
	wakeEach(b, rt, ids)
	mib := func(v uint64) float64 { return float64(v) / (1 << 20) }
	b.ReportMetric(float64(n), "sessions")
	b.ReportMetric(float64(n)/created.Seconds(), "created/s")
	b.ReportMetric(mib(loadedRSS), "MiB-RSS-loaded")
	b.ReportMetric(mib(idleRSS), "MiB-RSS-passivated")
	b.ReportMetric(float64(loadedHeap-min(base, loadedHeap))/float64(n), "B-heap/loaded")
	b.ReportMetric(float64(idleHeap-min(base, idleHeap))/float64(n), "B-heap/passivated")
}

// BenchmarkPassivatedSessions is the scale the passivation is for: it
// creates sessions (TACK_BENCH_SESSIONS, default 20,000) in a store —
// store=sqlite, a SQLite file, and store=memory, the in-memory store —
// each of which runs one prompt, in a runtime that passivates them after
// 1 s, so that they never all sit in memory at once (a million loaded ones
// would need about 12 GiB); when every one has been passivated it reads
// RSS and the Go heap (with the memory store, the heap includes the
// store's own record of each session). Per op it times waking one
// passivated session, as BenchmarkPassivation does:
//
//	TACK_BENCH_SESSIONS=1000000 go test -run '^$' -bench PassivatedSessions -benchtime 1000x -timeout 2h .
func BenchmarkPassivatedSessions(b *testing.B) {
	for _, name := range []string{"sqlite", "memory"} {
		b.Run("store="+name, func(b *testing.B) {
			if fixedCountProbe(b) {
				return
			}
			n := benchSessions(20000)
			var st store.Store = memory.New()
			if name == "sqlite" {
				st = benchStore(b)
			}
			base := liveheap.Bytes()
			// A minute per command, not the default 10 s: two runs of a
			// million on a machine shared with other work (load average
			// 15 - 24 on 2 cores) failed with commands that waited longer.
			rt, err := tack.New(tack.WithStore(st), tack.WithNode("bench"), tack.WithPassivateAfter(time.Second),
				tack.WithRequestTimeout(time.Minute))
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			ids, created := createSessions(b, rt, n)
			idleRSS, idleHeap := waitPassivated(b, rt)
			wakeEach(b, rt, ids)
			b.ReportMetric(float64(n), "sessions")
			b.ReportMetric(float64(n)/created.Seconds(), "created/s")
			b.ReportMetric(float64(idleRSS)/(1<<20), "MiB-RSS-passivated")
			b.ReportMetric(float64(idleHeap-min(base, idleHeap))/float64(n), "B-heap/passivated")
		})
	}
}

// fixedCountProbe reports whether this call is the testing package's
// first probe (b.N = 1) of a run whose -benchtime asks for a fixed count
// above 1, which the package then runs in a second call: the setup of
// these benchmarks takes minutes at scale, and doing it for the probe too
// would double that.
func fixedCountProbe(b *testing.B) bool {
	f := flag.Lookup("test.benchtime")
	return b.N == 1 && f != nil && strings.HasSuffix(f.Value.String(), "x") && f.Value.String() != "1x"
}

// benchSessions is TACK_BENCH_SESSIONS, else def.
func benchSessions(def int) int {
	if v, err := strconv.Atoi(os.Getenv("TACK_BENCH_SESSIONS")); err == nil && v > 0 {
		return v
	}
	return def
}

// benchStore is a SQLite store in a file of b's own, closed when b ends.
func benchStore(b *testing.B) *sqlite.Store {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "tack.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// createSessions creates n sessions in rt, each of which runs one prompt
// on a one-turn script, and says how long that took (not waiting for the
// runs to end).
func createSessions(b *testing.B, rt *tack.Runtime, n int) ([]string, time.Duration) {
	script := json.RawMessage(`{"turns":[{"text":"Hello, this is a short answer."}]}`)
	ids := make([]string, n)
	start := time.Now()
	parallel(b, n, func(k int) error {
		ids[k] = fmt.Sprintf("p%07d", k)
		s, err := rt.Spawn(tack.SessionConfig{ID: ids[k], Script: script})
		if err == nil {
			_, err = s.Prompt(context.Background(), "hi")
		}
		return err
	})
	return ids, time.Since(start)
}

// waitPassivated waits until rt holds no session loaded, then returns the
// process's RSS and Go heap, memory freed to the OS first.
func waitPassivated(b *testing.B, rt *tack.Runtime) (rss, heap uint64) {
	eventually.Within(b, 30*time.Minute, func() error {
		if n := len(rt.Sessions()); n > 0 {
			return fmt.Errorf("%d sessions still loaded", n)
		}
		return nil
	})
	debug.FreeOSMemory()
	return rssBytes(b), liveheap.Bytes()
}

// wakeEach times b.N wakes, get_state on ids in turn, each wanting the
// one prompt and its answer.
func wakeEach(b *testing.B, rt *tack.Runtime, ids []string) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s, err := rt.State(context.Background(), ids[i%len(ids)]); err != nil || s.MessageCount != 2 {
			b.Fatalf("wake %s: %v, %v", ids[i%len(ids)], s, err)
		}
	}
	b.StopTimer()
}

// parallel runs do(0..n-1) from 32 goroutines; the first error fails b.
func parallel(b *testing.B, n int, do func(k int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for k := next.Add(1) - 1; k < int64(n); k = next.Add(1) - 1 {
				if err := do(int(k)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
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
