package events

import (
	eventsv1 "github.com/tack-run/tack/events/v1"
)

//go:generate go run ./internal/gentypes -o types_gen.go

// Type returns the wire name of ev: the name of the set member of
// Event.payload, such as "message_delta". It is the "type" key of the JSON
// form. Type returns "" when ev is nil or carries no payload.
func Type(ev *eventsv1.Event) string {
	if i := typeIndex(ev); i >= 0 {
		return typeNames[i]
	}
	return ""
}

// Types returns the wire names of all event types, in proto declaration
// order. The caller owns the returned slice.
func Types() []string {
	return append([]string(nil), typeNames[:]...)
}

// newEventsLost builds the per-subscriber notice that the events from..to
// of session were not delivered. It carries seq 0: it is not part of the
// session's sequence.
func newEventsLost(session string, from, to uint64, tsUnixNano int64) *eventsv1.Event {
	ev := New(&eventsv1.EventsLost{From: from, To: to})
	ev.Session = session
	ev.TsUnixNano = tsUnixNano
	return ev
}
