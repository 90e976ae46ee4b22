package eventstest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Pred selects events, for Recorder's waits.
type Pred func(ev *eventsv1.Event) bool

// IsType returns a Pred matching events of any of the given wire names.
func IsType(names ...string) Pred {
	return func(ev *eventsv1.Event) bool {
		return slices.Contains(names, events.Type(ev))
	}
}

// Recorder is an events.Sink that records every event delivered to it.
// Deliver and the reading methods are safe to call from any goroutines;
// Deliver never blocks for long. Use it through a pointer (NewRecorder).
type Recorder struct {
	mu      sync.Mutex
	evs     []*eventsv1.Event
	changed chan struct{} // closed and replaced at every Deliver
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{changed: make(chan struct{})}
}

// Deliver records ev and wakes the waiters.
func (r *Recorder) Deliver(ev *eventsv1.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, in delivery order.
func (r *Recorder) Events() []*eventsv1.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

// Types returns the wire names of the events recorded so far.
func (r *Recorder) Types() []string {
	return Types(r.Events())
}

// Len returns the number of events recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.evs)
}

// Reset forgets the events recorded so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.evs = nil
	r.mu.Unlock()
}

// WaitFor returns the first recorded event matching pred, waiting up to
// timeout for it to arrive; on timeout it fails t with the types recorded
// so far and returns nil.
func (r *Recorder) WaitFor(t testing.TB, pred Pred, timeout time.Duration) *eventsv1.Event {
	t.Helper()
	return r.WaitForNth(t, 1, pred, timeout)
}

// WaitForType is WaitFor(t, IsType(name), timeout).
func (r *Recorder) WaitForType(t testing.TB, name string, timeout time.Duration) *eventsv1.Event {
	t.Helper()
	return r.WaitForNth(t, 1, IsType(name), timeout)
}

// WaitForNth returns the n-th (from 1) recorded event matching pred, waiting
// up to timeout for it; on timeout it fails t and returns nil. It wakes on
// each delivery rather than polling.
func (r *Recorder) WaitForNth(t testing.TB, n int, pred Pred, timeout time.Duration) *eventsv1.Event {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	seen, checked := 0, 0
	for {
		r.mu.Lock()
		for ; checked < len(r.evs); checked++ {
			if pred(r.evs[checked]) {
				if seen++; seen == n {
					ev := r.evs[checked]
					r.mu.Unlock()
					return ev
				}
			}
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			t.Errorf("eventstest: timed out after %v waiting for match #%d (saw %d); recorded types: %v",
				timeout, n, seen, r.Types())
			return nil
		}
	}
}
