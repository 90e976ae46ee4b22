package fsm

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/looplab/fsm"
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

// Fire applies e to the current state through looplab/fsm. It returns the
// state before and after: a self-transition (running -> running on
// NextTurn) succeeds with from == to. When e is not allowed in the current
// state, Fire returns a *TransitionError, from and to are both the current
// state, and nothing changes.
func (m *Machine) Fire(e Event) (from, to State, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	from = m.state()
	f := engines.Get().(*fsm.FSM)
	defer engines.Put(f)
	f.SetState(string(from))
	if err := f.Event(context.Background(), string(e)); err != nil {
		var same fsm.NoTransitionError
		if !errors.As(err, &same) || same.Err != nil {
			return from, from, &TransitionError{State: from, Event: e, Err: err}
		}
	}
	m.current = State(f.Current())
	return from, m.current, nil
}

// Can reports whether e is allowed in the current state.
func (m *Machine) Can(e Event) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := engines.Get().(*fsm.FSM)
	defer engines.Put(f)
	f.SetState(string(m.state()))
	return f.Can(string(e))
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
