package fsm

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/looplab/fsm"
)

// want is the transition table of the package documentation, written out
// independently of table.go: want[state][event] is the target, absent when
// the event is illegal in that state.
var want = map[State]map[Event]State{
	Idle: {
		Start:  Running,
		Resume: ExecutingTools,
	},
	Running: {
		FirstChunk: Streaming,
		ToolCalls:  ExecutingTools,
		NextTurn:   Running,
		Finish:     Idle,
		Abort:      Idle,
	},
	Streaming: {
		ToolCalls: ExecutingTools,
		NextTurn:  Running,
		Finish:    Idle,
		Abort:     Idle,
	},
	ExecutingTools: {
		NextTurn: Running,
		Finish:   Idle,
		Abort:    Idle,
	},
}

// pathTo lists the events that take a new Machine to s.
var pathTo = map[State][]Event{
	Idle:           nil,
	Running:        {Start},
	Streaming:      {Start, FirstChunk},
	ExecutingTools: {Start, ToolCalls},
}

func machineIn(t *testing.T, s State) *Machine {
	t.Helper()
	m := New()
	for _, e := range pathTo[s] {
		if _, _, err := m.Fire(e); err != nil {
			t.Fatalf("reaching %s: %v", s, err)
		}
	}
	if got := m.Current(); got != s {
		t.Fatalf("reaching %s: in %s", s, got)
	}
	return m
}

func TestFireEveryStateAndEvent(t *testing.T) {
	for _, s := range States() {
		for _, e := range Events() {
			t.Run(string(s)+"/"+string(e), func(t *testing.T) {
				m := machineIn(t, s)
				target, legal := want[s][e]
				if got := m.Can(e); got != legal {
					t.Errorf("Can(%s) = %v, want %v", e, got, legal)
				}
				from, to, err := m.Fire(e)
				if from != s {
					t.Errorf("from = %s, want %s", from, s)
				}
				if !legal {
					assertRefused(t, err, s, e)
					if to != s || m.Current() != s {
						t.Errorf("after refusal: to = %s, current = %s, want both %s", to, m.Current(), s)
					}
					return
				}
				if err != nil {
					t.Fatalf("Fire(%s) in %s: %v", e, s, err)
				}
				if to != target || m.Current() != target {
					t.Errorf("to = %s, current = %s, want both %s", to, m.Current(), target)
				}
			})
		}
	}
}

func assertRefused(t *testing.T, err error, s State, e Event) {
	t.Helper()
	var te *TransitionError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want a *TransitionError", err)
	}
	if te.State != s || te.Event != e {
		t.Errorf("TransitionError{State: %s, Event: %s}, want {%s, %s}", te.State, te.Event, s, e)
	}
	if msg := err.Error(); !strings.Contains(msg, string(s)) || !strings.Contains(msg, string(e)) {
		t.Errorf("message %q does not name state %s and event %s", msg, s, e)
	}
	var invalid fsm.InvalidEventError
	if !errors.As(err, &invalid) {
		t.Errorf("err does not wrap looplab's InvalidEventError: %v", err)
	}
}

func TestFireUnknownEvent(t *testing.T) {
	m := New()
	_, to, err := m.Fire("explode")
	var unknown fsm.UnknownEventError
	if !errors.As(err, &unknown) || to != Idle || m.Current() != Idle {
		t.Fatalf("Fire(explode) = %s, %v; current %s", to, err, m.Current())
	}
}

func TestZeroMachineIsIdle(t *testing.T) {
	var m Machine
	if got := m.Current(); got != Idle {
		t.Fatalf("zero Machine is in %s, want idle", got)
	}
	if !m.Can(Start) || m.Can(Finish) {
		t.Fatal("zero Machine does not behave as idle")
	}
	if from, to, err := m.Fire(Start); from != Idle || to != Running || err != nil {
		t.Fatalf("Fire(start) on zero Machine = %s, %s, %v", from, to, err)
	}
}

func TestMachinesAreIndependent(t *testing.T) {
	a, b := New(), New()
	if _, _, err := a.Fire(Start); err != nil {
		t.Fatal(err)
	}
	if got := b.Current(); got != Idle {
		t.Fatalf("b.Current() = %s after firing a, want idle", got)
	}
}

func TestConcurrentMachines(t *testing.T) {
	// A full run on many Machines at once: the shared pool must not leak
	// one Machine's state into another (run with -race).
	run := []Event{Start, FirstChunk, ToolCalls, NextTurn, Finish}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			m := New()
			for range 100 {
				for _, e := range run {
					if _, _, err := m.Fire(e); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
