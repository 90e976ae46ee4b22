package workers

import (
	"sync"
	"testing"
)

// BenchmarkGo compares a Pool with the go statement for a short function
// that runs deep, as a session's handlers do: each op starts one
// function and waits for it. With the go statement every op grows a fresh
// stack; on a Pool the worker's stack is already grown.
func BenchmarkGo(b *testing.B) {
	b.Run("go-statement", func(b *testing.B) {
		b.ReportAllocs()
		var wg sync.WaitGroup
		for b.Loop() {
			wg.Add(1)
			go func() { deep(64); wg.Done() }()
			wg.Wait()
		}
	})
	b.Run("pool", func(b *testing.B) {
		b.ReportAllocs()
		p := New(Idle)
		var wg sync.WaitGroup
		for b.Loop() {
			wg.Add(1)
			p.Go(func() { deep(64); wg.Done() })
			wg.Wait()
		}
	})
}

// deep recurses n frames of about 256 bytes each.
//
//go:noinline
func deep(n int) byte {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n == 0 {
		return pad[0]
	}
	return deep(n-1) + pad[n%256]
}
