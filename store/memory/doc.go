// Package memory is the in-memory store.Store: nothing survives the
// process. It is the default of `tack rpc` and `tack demo` (--store memory)
// and the reference the conformance suite is first written against.
//
// # Usage
//
//	st := memory.New()                         // or memory.New(store.WithClock(clock))
//	err := st.Create(ctx, "s1", store.Config{Model: "script:demo"})
//	err = st.Apply(ctx, "s1", &store.Batch{From: 0, Messages: msgs, State: "idle"})
//
// Values are stored encoded, exactly as the SQL stores encode them, so a
// message that SQLite or PostgreSQL would refuse is refused here too, and
// nothing a caller holds aliases stored data.
//
// # Memory
//
// A runtime that parks its quiet sessions here (tack.WithPassivateAfter
// with no store of its own; Put writes a session whole as it stops,
// Remove takes it out as it wakes) keeps nothing of a parked session but
// its entry, so an entry is compact: 64 bytes holding the record
// encoded (a storepb.Record: state, title, usage, lease, creation time and
// volatile state, each field absent when empty), the update time in Unix
// microseconds, the configuration and the history. The configuration is
// interned (package unique), so the sessions created with the same model
// and settings share one copy of them. An idle session that never ran
// takes about 110 bytes of heap with its record and its share of the map
// (BenchmarkHeapPerStoredSession; TestStoredSessionHeap bounds it); a
// history adds its encoded messages.
//
// # Concurrency
//
// All methods are safe for concurrent use; one RWMutex guards the map.
// Messages and volatile states are encoded before it is taken, and reads
// decode after it; a write decodes the small record, checks and changes
// it, and encodes it again under the lock.
//
// # Testing
//
// memory_test.go runs store/storetest against it; size_test.go guards the
// entry's size and the heap of a stored session.
package memory
