package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/store"
)

// Factory returns a new, empty store built with opts. It registers the
// store's cleanup (Close, temporary files, schemas) on tb.
type Factory func(tb testing.TB, opts ...store.Option) store.Store

// Run runs the conformance suite against the stores newStore makes.
func Run(t *testing.T, newStore Factory) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *env)
	}{
		{"CreateGet", testCreateGet},
		{"CreateInvalid", testCreateInvalid},
		{"NotFound", testNotFound},
		{"Append", testAppend},
		{"AppendIdempotent", testAppendIdempotent},
		{"Gap", testGap},
		{"AtomicBatch", testAtomicBatch},
		{"InvalidBatch", testInvalidBatch},
		{"CancelledContext", testCancelledContext},
		{"Rewrite", testRewrite},
		{"CompactRewrite", testCompactRewrite},
		{"RollbackRewrite", testRollbackRewrite},
		{"RollbackUncompacts", testRollbackUncompacts},
		{"MessagesPage", testMessagesPage},
		{"BatchFields", testBatchFields},
		{"VolatileReplace", testVolatileReplace},
		{"List", testList},
		{"ListOrderFollowsUpdates", testListOrderFollowsUpdates},
		{"ListBadCursor", testListBadCursor},
		{"ListByUser", testListByUser},
		{"Delete", testDelete},
		{"DeleteSubagents", testDeleteSubagents},
		{"Stale", testStale},
		{"Ownership", testOwnership},
		{"OwnershipInvalid", testOwnershipInvalid},
		{"FencedApply", testFencedApply},
		{"RacingAcquire", testRacingAcquire},
		{"ConcurrentSessions", testConcurrentSessions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := NewClock(time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC))
			st := newStore(t, store.WithClock(clock.Now))
			tc.run(t, &env{st: st, clock: clock, ctx: t.Context()})
		})
	}
}

// env is what each conformance test gets.
type env struct {
	st    store.Store
	clock *Clock
	ctx   context.Context
}

// Clock is a manual clock: Now stays put until Advance moves it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time; pass it to store.WithClock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
