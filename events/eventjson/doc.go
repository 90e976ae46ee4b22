// Package eventjson writes and reads the JSON form of Tack's events and
// commands (docs/protocol.md): the JSON lines of `tack rpc`, the SSE and
// WebSocket frames and the REST bodies of `tack serve`.
//
// Append writes an event as one JSON line:
//
//	var line []byte
//	for ev := range ch.C() {
//		line = eventjson.Append(line[:0], ev)
//		// write line + "\n"
//	}
//
// Commands arrive as JSON lines and are read with Unmarshal (or, once the
// line's own keys are taken off, UnmarshalObject) into their eventsv1
// message, which reject keys that are no field of it; replies are written
// with Marshal or AppendMessage, which apply the same rules as Append.
// Timestamp formats other times of the protocol the way an event's ts is
// written.
//
// The encoder and decoder walk protoreflect descriptors, with each
// message's layout computed once; the switch that finds an event's payload
// is generated from the proto (events/internal/gentypes, run by go
// generate), so Append allocates almost nothing (see Append). All
// functions are safe for concurrent use.
package eventjson
