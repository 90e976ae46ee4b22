// Package codec turns the store's values into the bytes the SQL stores
// keep and back: messages as protobuf, the volatile state as a storepb
// message, List cursors as opaque strings; and a session record into the
// compact storepb.Record the memory store keeps.
//
// # Usage
//
//	data, err := codec.Messages(b.Messages, b.From) // one []byte per message
//	blob, err := codec.EncodeVolatile(b.Volatile)
//	v, err := codec.DecodeVolatile(blob)
//	rec, err := codec.EncodeRecord(&session, blob) // store/memory's entry
//
// Encoding errors wrap store.ErrInvalid and name the offending index.
//
// # Concurrency
//
// Every function is pure and safe for concurrent use.
//
// # Testing
//
// Round-trip table tests in this package; the conformance suite
// (store/storetest) covers the same paths through every implementation.
package codec
