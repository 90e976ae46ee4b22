package eventstest_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeT records failures instead of failing the test.
type fakeT struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func evs(types ...string) []*eventsv1.Event {
	byName := map[string]func() *eventsv1.Event{
		"agent_start":   func() *eventsv1.Event { return events.New(&eventsv1.AgentStart{}) },
		"turn_start":    func() *eventsv1.Event { return events.New(&eventsv1.TurnStart{}) },
		"message_delta": func() *eventsv1.Event { return events.New(&eventsv1.MessageDelta{}) },
		"turn_end":      func() *eventsv1.Event { return events.New(&eventsv1.TurnEnd{}) },
		"agent_end":     func() *eventsv1.Event { return events.New(&eventsv1.AgentEnd{}) },
		"agent_abort":   func() *eventsv1.Event { return events.New(&eventsv1.AgentAbort{}) },
	}
	var out []*eventsv1.Event
	for _, ty := range types {
		out = append(out, byName[ty]())
	}
	return out
}

func TestExpectTypes(t *testing.T) {
	tests := []struct {
		name string
		got  []string
		want []string
		diff string // "" when they match
	}{
		{"equal", []string{"agent_start", "agent_end"}, []string{"agent_start", "agent_end"}, ""},
		{"both empty", nil, nil, ""},
		{
			name: "missing and extra",
			got:  []string{"agent_start", "message_delta", "agent_abort", "agent_end"},
			want: []string{"agent_start", "turn_start", "message_delta", "agent_end"},
			diff: "  agent_start\n- turn_start\n  message_delta\n+ agent_abort\n  agent_end\n",
		},
		{
			name: "order matters",
			got:  []string{"agent_end", "agent_start"},
			want: []string{"agent_start", "agent_end"},
			diff: "- agent_start\n  agent_end\n+ agent_start\n",
		},
		{
			name: "contains is not enough",
			got:  []string{"agent_start", "agent_start"},
			want: []string{"agent_start"},
			diff: "  agent_start\n+ agent_start\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeT{TB: t}
			ok := eventstest.ExpectTypes(ft, evs(tt.got...), tt.want...)
			if ok != (tt.diff == "") {
				t.Errorf("ExpectTypes = %v", ok)
			}
			if tt.diff == "" {
				if len(ft.errors) != 0 {
					t.Errorf("unexpected failure: %v", ft.errors)
				}
				return
			}
			if len(ft.errors) != 1 || !strings.HasSuffix(ft.errors[0], "\n"+tt.diff) {
				t.Errorf("failure message %q, want it to end with diff\n%s", ft.errors, tt.diff)
			}
		})
	}
}

func TestRecorderWaitFor(t *testing.T) {
	rec := eventstest.NewRecorder()
	s := events.NewStream("s1")
	s.Subscribe(rec, 0, events.Filter{})
	s.Emit(&eventsv1.AgentStart{})

	// Already recorded: returns at once.
	if ev := rec.WaitForType(t, "agent_start", time.Second); ev.GetSeq() != 1 {
		t.Errorf("WaitForType returned seq %d", ev.GetSeq())
	}

	// Delivered later from another goroutine.
	sink := make(chan *eventsv1.Event)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range sink {
			rec.Deliver(ev)
		}
	}()
	got := make(chan *eventsv1.Event)
	go func() { got <- rec.WaitForNth(t, 3, eventstest.IsType("message_delta"), 10*time.Second) }()
	for _, ev := range evs("message_delta", "turn_end", "message_delta", "message_delta", "agent_end") {
		sink <- ev
	}
	close(sink)
	<-done
	third := <-got
	all := rec.Events()
	if third != all[4] {
		t.Errorf("WaitForNth(3) returned %v, want the 5th recorded event", third)
	}
	if got, want := strings.Join(rec.Types(), ","), "agent_start,message_delta,turn_end,message_delta,message_delta,agent_end"; got != want {
		t.Errorf("Types = %s, want %s", got, want)
	}
	if rec.Len() != 6 {
		t.Errorf("Len = %d", rec.Len())
	}
	rec.Reset()
	if rec.Len() != 0 {
		t.Errorf("Len after Reset = %d", rec.Len())
	}
}

func TestRecorderWaitForTimeout(t *testing.T) {
	rec := eventstest.NewRecorder()
	rec.Deliver(events.New(&eventsv1.AgentStart{}))
	ft := &fakeT{TB: t}
	if ev := rec.WaitFor(ft, eventstest.IsType("agent_end"), time.Millisecond); ev != nil {
		t.Errorf("WaitFor returned %v", ev)
	}
	if len(ft.errors) != 1 || !strings.Contains(ft.errors[0], "recorded types: [agent_start]") {
		t.Errorf("failure = %q", ft.errors)
	}
}
