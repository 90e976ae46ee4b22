package fsm

import (
	"fmt"
	"sync"
)

// Machine is the state machine of one session. The zero value is a
// Machine in state Idle, so a session may hold one by value (and save
// New's allocation); do not copy a Machine once used.
type Machine struct {
	mu sync.Mutex
	// current is the state; "" means Idle.
	current State
}

// New returns a Machine in state Idle.
func New() *Machine {
	return &Machine{current: Idle}
}

// Current returns the current state.
func (m *Machine) Current() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state()
}

// state is the current state; m.mu must be held.
func (m *Machine) state() State {
	if m.current == "" {
		return Idle
	}
	return m.current
}

// Fire applies e to the current state as looplab/fsm does. It returns the
// state before and after: a self-transition (running -> running on
// NextTurn) succeeds with from == to. When e is not allowed in the current
// state, Fire returns a *TransitionError, from and to are both the current
// state, and nothing changes.
func (m *Machine) Fire(e Event) (from, to State, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	from = m.state()
	o := lookup(from, e)
	if o.err != nil {
		return from, from, &TransitionError{State: from, Event: e, Err: o.err}
	}
	m.current = o.to
	return from, m.current, nil
}

// Can reports whether e is allowed in the current state.
func (m *Machine) Can(e Event) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return lookup(m.state(), e).err == nil
}

// TransitionError is returned by Fire for an event that is not allowed in
// the current state. It wraps looplab's error (fsm.InvalidEventError, or
// fsm.UnknownEventError for an event that does not exist).
type TransitionError struct {
	// State is the state the Machine was, and still is, in.
	State State
	// Event is the refused event.
	Event Event
	// Err is looplab's error.
	Err error
}

// Error names the state and the event.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("fsm: event %q is not allowed in state %q", e.Event, e.State)
}

// Unwrap returns looplab's error.
func (e *TransitionError) Unwrap() error { return e.Err }
