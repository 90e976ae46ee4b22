// Package storepb holds the protobuf forms the store encodes: a
// session's volatile state (volatile.proto: queues, pending approvals and
// question with their deadlines, approval-always rules, the todo list and
// the tools detached) and the memory store's compact session record
// (record.proto). It is internal to the store.
//
// # Usage
//
// Only store/internal/codec uses it, to turn a store.Volatile into bytes
// for a BLOB/bytea column and back, and a store.Session into the bytes
// store/memory keeps of it.
//
// # Concurrency
//
// Generated protobuf messages: safe to read concurrently, not to mutate.
//
// # Testing
//
// Round trips are tested in store/internal/codec.
package storepb

// Regenerate with protoc 3.21.12 and the protoc-gen-go pinned in go.mod:
//
//go:generate sh -c "cd ../../.. && protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --go_out=. --go_opt=paths=source_relative store/internal/storepb/volatile.proto store/internal/storepb/record.proto"
