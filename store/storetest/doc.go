// Package storetest is the conformance suite every store.Store passes, and
// the benchmarks they share. It is a test kit, imported only by tests.
//
// # Usage
//
// An implementation's test hands Run a Factory that returns a new, empty
// store for each subtest and registers its own cleanup:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(tb testing.TB, opts ...store.Option) store.Store {
//			st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "t.db"), opts...)
//			if err != nil {
//				tb.Fatal(err)
//			}
//			tb.Cleanup(func() { st.Close() })
//			return st
//		})
//	}
//
//	func BenchmarkStore(b *testing.B) { storetest.Bench(b, factory) }
//
// The suite passes store.WithClock with a Clock it advances by hand, so
// lease expiry and list order are tested without sleeping; a factory must
// forward opts to the store.
//
// # Concurrency
//
// Subtests run in parallel, each on its own store; some start 100
// goroutines against one store. Run under -race.
//
// # Testing
//
// Run covers: create and get, not-found on every method, appends and their
// idempotency, gaps, atomic batches (a batch failing in the middle leaves
// nothing behind), history rewrite, paging of messages and of List,
// volatile-state replacement, batch fields, delete, ownership (two owners,
// expiry, renew, release, fenced writes, racing acquirers) and 100
// concurrent sessions.
package storetest
