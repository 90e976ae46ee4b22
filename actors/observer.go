package actors

import (
	"time"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/fsm"
)

// Observer is told what sessions do, for metrics (package metrics
// implements it for Prometheus). Sessions call it on their actor's
// goroutine, StoreWrite on their write goroutine; many sessions call it at
// once. Its methods must be cheap and must never block: they run on the
// session's hot path. A session tells its observer before it publishes
// the event that tells the same (agent_abort aside, whose delivery
// AbortTold times), so a subscriber that saw an event finds it counted.
type Observer interface {
	// SessionStarted: a session actor started, in state idle (a restored
	// session starts idle too, a run paused for a person's answer
	// included).
	SessionStarted()
	// SessionStopped: a session actor stopped in state.
	SessionStopped(state fsm.State)
	// StateChanged: a session moved from one state to another.
	StateChanged(from, to fsm.State)
	// RunStarted: a run started (agent_start).
	RunStarted()
	// RunEnded: a run ended with reason: an agent_end's reason, or
	// events.EndError for a run a failed write took down before its start was
	// told (no agent_end goes out for it). A restore that finds a run cut
	// short by a crash reports it ended with events.EndInterrupted.
	RunEnded(reason events.EndReason)
	// AbortTold: agent_abort was published latency after the session took
	// up the abort command or a plugin decided to abort.
	AbortTold(latency time.Duration)
	// Tokens: a model response used in input and out output tokens.
	Tokens(in, out int64)
	// ToolDone: a tool the session ran settled after d (as
	// tool_execution_metrics reports it), ok unless its result is an
	// error. Calls settled without running (blocked, invalid arguments)
	// are not reported.
	ToolDone(name string, d time.Duration, ok bool)
	// StoreWrite: one try at writing a session to the store took d and
	// failed with err, or succeeded when err is nil.
	StoreWrite(d time.Duration, err error)
}

// nopObserver is the Observer of an Env without one.
type nopObserver struct{}

func (nopObserver) SessionStarted()                      {}
func (nopObserver) SessionStopped(fsm.State)             {}
func (nopObserver) StateChanged(_, _ fsm.State)          {}
func (nopObserver) RunStarted()                          {}
func (nopObserver) RunEnded(events.EndReason)            {}
func (nopObserver) AbortTold(time.Duration)              {}
func (nopObserver) Tokens(_, _ int64)                    {}
func (nopObserver) ToolDone(string, time.Duration, bool) {}
func (nopObserver) StoreWrite(time.Duration, error)      {}
