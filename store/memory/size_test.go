package memory

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/tack-run/tack/internal/liveheap"
	"github.com/tack-run/tack/store"
)

// A passivated session is its entry and nothing more, so the entry is the
// lever on an idle session's footprint: with its key, a slot of the map
// must stay at 64 bytes.
func TestEntrySizeClass(t *testing.T) {
	const limit = 48
	if got := unsafe.Sizeof(entry{}); got > limit {
		t.Fatalf("entry is %d bytes, over %d (64 with its key): keep what a session rarely has in its encoded record, or behind a pointer", got, limit)
	}
}

// A stored idle session is one small object, its encoded record; its
// entry is a slot of the map's tables. Small objects kept past the
// sessions that were live beside them when they were made hold the pages
// of those sessions' freed memory (issue 30, finding 9), so each one more
// is RSS a process with many passivated sessions cannot give back.
func TestStoredSessionIsOneSmallObject(t *testing.T) {
	const n = 10000
	ids := idsOf(n)
	before := smallObjects()
	st := New()
	storeIdle(t, st, ids)
	got := float64(smallObjects()-before) / n
	runtime.KeepAlive(st)
	if got > 1.25 { // its record, and some of the map's smaller tables
		t.Fatalf("a stored idle session is %.2f small objects, want 1 (its record)", got)
	}
}

// smallObjects collects garbage and returns the number of live objects of
// the small size classes.
func smallObjects() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var n int64
	for _, c := range ms.BySize {
		n += int64(c.Mallocs) - int64(c.Frees)
	}
	return n
}

// storedSessionHeap is the live heap, in bytes per session, of n sessions
// stored as storeIdle stores them.
func storedSessionHeap(tb testing.TB, n int) float64 {
	ids := idsOf(n)
	before := liveheap.Bytes()
	st := New()
	storeIdle(tb, st, ids)
	after := liveheap.Bytes()
	runtime.KeepAlive(st)
	return (float64(after) - float64(before)) / float64(n)
}

// idsOf returns n session ids, made before a measure begins: a runtime's
// ids are its handles' and its registry's too.
func idsOf(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("s-%d", i+1)
	}
	return ids
}

// storeIdle stores the sessions ids in st as a runtime leaves the
// sessions it passivated: created with one configuration, their state
// written once, their lease taken and given up.
func storeIdle(tb testing.TB, st *Store, ids []string) {
	ctx := tb.Context()
	cfg := store.Config{Model: "script:demo", Spec: json.RawMessage(`{"tools":["echo"],"system":"You are terse."}`)}
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
