package command

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// TestPipeline: a command starts once the one before it has reached its
// session (it calls what its context carries) or has ended, and the
// answers keep the commands' order whichever finishes first.
func TestPipeline(t *testing.T) {
	p := NewPipeline(8)
	var mu sync.Mutex
	var log []string
	note := func(s string) {
		mu.Lock()
		log = append(log, s)
		mu.Unlock()
	}
	answered := func(s string) func() { return func() { note("answer " + s) } }
	slow, cRan := make(chan struct{}), make(chan struct{})
	ctx := context.Background()
	// a: reaches its session at once, then its answer waits.
	p.Go(ctx, func(ctx context.Context) func() {
		ctx.Value(followKey{}).(func())()
		<-slow
		return answered("a")
	})
	// b: starts while a's answer waits; it is one whole command (no
	// delivery), answered at once but written after a's.
	p.Go(ctx, func(context.Context) func() {
		note("b runs")
		return answered("b")
	})
	// c: starts once b has ended, a's answer still waiting.
	p.Go(ctx, func(context.Context) func() {
		note("c runs")
		close(cRan)
		return answered("c")
	})
	<-cRan
	close(slow)
	p.Wait()
	want := []string{"b runs", "c runs", "answer a", "answer b", "answer c"}
	if !slices.Equal(log, want) {
		t.Fatalf("log %q, want %q", log, want)
	}
}
