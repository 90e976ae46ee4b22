// Package store is where sessions outlive their process: the Store
// interface, its records and errors. Implementations live in store/memory,
// store/sqlite (the embedded default) and store/postgres (several nodes);
// store/open picks one from a --store value; store/storetest is the
// conformance suite they all pass.
//
// A stored session has three parts:
//
//   - the record (Session): id, configuration (model and user, and the
//     rest of the session's settings as one JSON object that package spec
//     writes and the store keeps verbatim: Config.Spec), last FSM state,
//     usage totals, the last event sequence number, the ownership lease,
//     created/updated times;
//   - the committed history: eventsv1.Message values at indexes 0, 1, ...,
//     stored as protobuf bytes, exactly as the wire carries them;
//   - the volatile state (Volatile): prompt and steering queues, pending
//     approvals and question with their deadlines, approval-always rules —
//     one value, replaced as a whole.
//
// # Usage
//
// Writes are batches. Apply commits a Batch — new messages with their
// indexes, and whichever of state, usage, config, event seq and volatile
// state changed — in one transaction, and returns once it is durable:
//
//	err := st.Apply(ctx, id, &store.Batch{
//		Owner:    node,                       // fence: fails with ErrOwned if node lost the lease
//		From:     committed,                  // index of the first message
//		Messages: []*eventsv1.Message{msg},
//		State:    "executing_tools",
//		Usage:    totals,
//		Volatile: &store.Volatile{PromptQueue: queue},
//	})
//	// only now emit message_committed
//
// Messages at indexes already stored are skipped, so a batch retried after
// an ambiguous failure never duplicates; a batch that starts past the end
// fails with ErrGap. A batch is all or nothing: a message that cannot be
// encoded, a full disk or a dropped connection leaves the session exactly
// as before.
//
// Reads never load more than asked: List pages records (no histories,
// most recently updated first, with an opaque cursor); Get returns the
// record and volatile state (get_state of an unloaded session); Messages
// returns a page of history (get_messages); Load returns everything a
// restore needs.
//
// Ownership is a lease on the session row: Acquire(id, node, ttl) succeeds
// for one node at a time until the lease expires or is released; Renew
// keeps it, and fails once another node took it over; Batch.Owner fences
// writes so a node that lost its lease cannot write. The store's clock
// (WithClock) decides expiry, so leases assume node clocks agree to well
// under the ttl.
//
// # Concurrency
//
// Every Store method is safe for concurrent use. Writes to one session
// are serialised by the store; a session actor should still send them from
// one writer goroutine, in order, waiting for each acknowledgement, since
// the history's indexes are its to assign. Values passed in and returned
// are copied: the caller may change them afterwards.
//
// # Testing
//
// store_test.go covers Batch validation and the error types;
// store/storetest runs the same conformance suite against every
// implementation (PostgreSQL through store/postgres/pgtest and
// TACK_TEST_POSTGRES).
package store
