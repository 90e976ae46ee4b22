// Package events is Tack's event vocabulary at run time: it builds events,
// names them, numbers them per session, keeps the newest in a ring buffer
// for replay and delivers them to filtered subscribers. Package
// events/eventjson writes and reads their JSON-lines form.
//
// The messages themselves are protobuf (package eventsv1, generated from
// events/v1/*.proto): an Event envelope with a session, a seq, a timestamp
// and exactly one payload, whose oneof field name is the event's wire name.
//
// # Usage
//
// The session actor owns one Stream and publishes through it:
//
//	s := events.NewStream("s1")
//	s.Emit(&eventsv1.SessionCreated{Model: "script:demo.json"})
//	s.Publish(events.New(&eventsv1.MessageDelta{Delta: "Hel"}))
//
// A subscriber gets the buffered events after a seq, then live ones:
//
//	f, err := events.NewFilter([]string{"tool_*", "agent_end"}) // err → bad_request
//	ch := events.NewChannel(256)
//	s.Subscribe(ch, since, f)
//	go func() {
//		var line []byte
//		for ev := range ch.C() {
//			line = eventjson.Append(line[:0], ev)
//			// write line + "\n"
//		}
//	}()
//
// Type and Types name events; New and Type are type switches generated
// from the proto (events/internal/gentypes, run by go generate), so the hot
// path does no reflection.
//
// # Concurrency
//
// A Stream belongs to one goroutine, the session actor: Publish, Subscribe,
// Unsubscribe, Replay and Trim are called only from it, and it needs no
// locks. Sink.Deliver runs on that goroutine and must not block; Channel
// is the Sink that hands events to another goroutine, dropping and
// reporting (events_lost) rather than waiting when its reader is slow.
//
// Events are shared pointers: once published, an event is held by every
// subscriber at the same time, and its payload by the ring buffer, so
// everyone must treat them as read-only. (The ring keeps only the payload
// and the time; a replay makes each Event again, equal to the one
// published.) A payload may also serve many events: the sessions publish
// one state_changed payload for each pair of states, for instance. Notices addressed to one subscriber (events_lost from
// Replay or from a Channel that dropped events) carry seq 0: they are not
// part of the session's sequence, which starts at 1 and has no gaps.
//
// Type, Types, New and Filter are safe for concurrent use.
//
// # Testing
//
// Package events/eventstest provides a Recorder sink that a test can wait
// on and ExpectTypes, which asserts an exact sequence of event types and
// prints a diff when it differs. A Stream made with WithClock gives
// deterministic timestamps.
package events
