package actors

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
)

// Payloads of the events a turn tells over and over (three state_changed,
// two or three agent_status), one of each for every session: a payload is
// read-only once published (package events), and each kept its own in
// the ring of every session that ran (issue 30, finding 18).
var (
	statusIdle     = &eventsv1.AgentStatus{Status: string(events.StatusIdle)}
	statusThinking = &eventsv1.AgentStatus{Status: string(events.StatusThinking)}
	// stateChanges[i][j] is the state_changed from the i-th to the j-th
	// of fsm.States().
	stateChanges = func() [][]*eventsv1.StateChanged {
		t := make([][]*eventsv1.StateChanged, len(fsmStates))
		for i, from := range fsmStates {
			t[i] = make([]*eventsv1.StateChanged, len(fsmStates))
			for j, to := range fsmStates {
				t[i][j] = &eventsv1.StateChanged{From: string(from), To: string(to)}
			}
		}
		return t
	}()
	fsmStates = fsm.States()
)

// stateChanged is the state_changed payload from one state to another.
func stateChanged(from, to fsm.State) *eventsv1.StateChanged {
	return stateChanges[slices.Index(fsmStates, from)][slices.Index(fsmStates, to)]
}

// createdPayloads holds the session_created payload of each model name
// seen, up to maxCreated names: the sessions on one model share it, where
// each kept its own in its ring, 64 bytes of every live session (issue
// 30). A payload is read-only once published (package events).
var (
	createdPayloads sync.Map // model name → *eventsv1.SessionCreated
	createdNames    atomic.Int32
)

// maxCreated bounds the model names whose session_created is shared; a
// session on any other model has a payload of its own.
const maxCreated = 256

// sessionCreated is the session_created payload of a session on model.
func sessionCreated(model string) *eventsv1.SessionCreated {
	if p, ok := createdPayloads.Load(model); ok {
		return p.(*eventsv1.SessionCreated)
	}
	p := &eventsv1.SessionCreated{Model: model}
	if createdNames.Load() >= maxCreated {
		return p
	}
	if old, loaded := createdPayloads.LoadOrStore(model, p); loaded {
		return old.(*eventsv1.SessionCreated)
	}
	createdNames.Add(1)
	return p
}
