// Package eventstest helps tests assert on Tack event streams.
//
// Recorder is an events.Sink that records what it receives and lets a test
// wait for an event without sleeping; ExpectTypes asserts an exact sequence
// of event types (not "contains") and prints a line diff when it differs:
//
//	rec := eventstest.NewRecorder()
//	stream.Subscribe(rec, 0, events.Filter{})
//	// ... drive the session ...
//	rec.WaitFor(t, eventstest.IsType("agent_end"), time.Second)
//	eventstest.ExpectTypes(t, rec.Events(), "agent_start", "turn_start", ...)
package eventstest
