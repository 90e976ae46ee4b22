package storetest

import (
	"context"
	"sync"

	"github.com/tack-run/tack/store"
)

// Gated is a store whose writes (Apply) wait while it is held: what a
// write under way looks like to the session that made it, for as long as
// a test needs. The zero value wraps nothing; set Store.
type Gated struct {
	store.Store
	mu   sync.Mutex
	gate chan struct{}
}

// HoldWrites makes the writes that start from now on wait until ReleaseWrites.
func (g *Gated) HoldWrites() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate == nil {
		g.gate = make(chan struct{})
	}
}

// ReleaseWrites lets the writes that wait go on, and those after them.
func (g *Gated) ReleaseWrites() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
}

// Apply waits while the store is held, then writes.
func (g *Gated) Apply(ctx context.Context, id string, b *store.Batch) error {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return g.Store.Apply(ctx, id, b)
}
