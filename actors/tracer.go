package actors

import (
	"time"

	"github.com/tack-run/tack/events"
)

// Tracer watches sessions to trace what they do (package tracing
// implements it with OpenTelemetry). A runtime without one does no
// per-event work for tracing at all.
type Tracer interface {
	// Session returns what watches the session id for its whole life, or
	// nil to leave it unwatched. It is called once per session actor
	// made (a restored session is a new actor). Sub-agent sessions are
	// not asked: their events reach their parent's watcher wrapped in
	// sub_agent_event.
	Session(id string) SessionTracer
}

// SessionTracer sees every event one session publishes, on the session's
// goroutine, under the rules of events.Sink: it must never block and must
// treat events as read-only.
type SessionTracer interface {
	events.Sink
	// Parent makes the next run the session starts a child of the trace
	// context traceparent (a W3C traceparent header value), as a prompt
	// command carried it.
	Parent(traceparent string)
	// Abort says the agent_abort published next answers an abort the
	// session took up (or a plugin decided) at since, so the tracer can
	// tell how long its delivery took.
	Abort(since time.Time)
}
