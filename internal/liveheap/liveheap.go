// Package liveheap reads the live heap, for the memory budgets of the
// tests and benchmarks: what a session, a stored record or a ring of
// events costs.
package liveheap

import "runtime"

// Bytes returns the live heap in bytes after two full collections (the
// second frees what the first's finalizers and cleanups let go).
func Bytes() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
