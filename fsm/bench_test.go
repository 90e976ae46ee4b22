package fsm

import (
	"runtime"
	"testing"
	"unsafe"
)

// BenchmarkNew reports what a Machine costs: allocations and bytes per New
// (B/op) and, as retained-B/machine, the heap a live Machine keeps. The
// budget for a whole idle session is 8 KiB.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = New()
	}
	b.ReportMetric(float64(unsafe.Sizeof(Machine{})), "struct-B")
	b.ReportMetric(retained(func() any { return New() }), "retained-B/machine")
}

// BenchmarkNewLooplabFSM measures one looplab FSM per instance, the design
// this package avoids (see # Memory in doc.go); compare with BenchmarkNew.
func BenchmarkNewLooplabFSM(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = newLooplab()
	}
	b.ReportMetric(retained(func() any { return newLooplab() }), "retained-B/machine")
}

// BenchmarkFire measures a short run per iteration: start, first chunk,
// finish (three transitions).
func BenchmarkFire(b *testing.B) {
	b.ReportAllocs()
	m := New()
	run := []Event{Start, FirstChunk, Finish}
	for b.Loop() {
		for _, e := range run {
			if _, _, err := m.Fire(e); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func TestNewAllocatesOnce(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { sink = New() }); n != 1 {
		t.Fatalf("New allocates %v times, want 1", n)
	}
}

var sink any

// retained returns the heap bytes kept alive per object made by mk.
func retained(mk func() any) float64 {
	const n = 10_000
	keep := make([]any, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = mk()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(after.HeapAlloc-before.HeapAlloc) / n
}
