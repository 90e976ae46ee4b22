package memory

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/tack-run/tack/store"
)

// A passivated session is its entry and nothing more, so the entry is the
// lever on an idle session's footprint: it must stay in the 64-byte size
// class.
func TestEntrySizeClass(t *testing.T) {
	const limit = 64
	if got := unsafe.Sizeof(entry{}); got > limit {
		t.Fatalf("entry is %d bytes, over the %d of its size class: keep what a session rarely has in its encoded record", got, limit)
	}
}

// storedSessionHeap is the live heap, in bytes per session, of n sessions
// stored as a runtime leaves the sessions it passivated: created with one
// configuration, their state written once, their lease taken and given up.
func storedSessionHeap(tb testing.TB, n int) float64 {
	ctx := tb.Context()
	cfg := store.Config{Model: "script:demo", Spec: json.RawMessage(`{"tools":["echo"],"system":"You are terse."}`)}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("s-%d", i+1)
	}
	before := liveHeap()
	st := New()
	for _, id := range ids {
		if err := st.Create(ctx, id, cfg); err != nil {
			tb.Fatal(err)
		}
		if err := st.Acquire(ctx, id, "node-1", time.Minute); err != nil {
			tb.Fatal(err)
		}
		b := &store.Batch{Owner: "node-1", State: "idle", EventSeq: 3,
			Volatile: &store.Volatile{Counters: store.Counters{Runs: 1}}}
		if err := st.Apply(ctx, id, b); err != nil {
			tb.Fatal(err)
		}
		if err := st.Release(ctx, id, "node-1"); err != nil {
			tb.Fatal(err)
		}
	}
	after := liveHeap()
	runtime.KeepAlive(st)
	return (float64(after) - float64(before)) / float64(n)
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestStoredSessionHeap bounds what a stored idle session costs: its
// entry, its encoded record and its share of the map, the configuration
// shared by all.
func TestStoredSessionHeap(t *testing.T) {
	const limit = 144
	got := storedSessionHeap(t, 20000)
	t.Logf("a stored idle session takes %.0f bytes of heap", got)
	if got > limit {
		t.Fatalf("a stored idle session takes %.0f bytes of heap, over %d", got, limit)
	}
}

// BenchmarkHeapPerStoredSession reports the heap a stored idle session takes
// (B/session); one op stores 10,000.
func BenchmarkHeapPerStoredSession(b *testing.B) {
	var per float64
	for b.Loop() {
		per = storedSessionHeap(b, 10000)
	}
	b.ReportMetric(per, "B/session")
}
