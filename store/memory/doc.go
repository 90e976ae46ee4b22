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
// # Concurrency
//
// All methods are safe for concurrent use; one RWMutex guards the map.
// Encoding and decoding happen outside it.
//
// # Testing
//
// memory_test.go runs store/storetest against it.
package memory
