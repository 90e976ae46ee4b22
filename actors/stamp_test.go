package actors

import (
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// steppingClock moves on by a microsecond at every reading and counts the
// readings.
type steppingClock struct {
	mu    sync.Mutex
	now   time.Time
	reads int
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	c.now = c.now.Add(time.Microsecond)
	return c.now
}

// TestMessageReadsClockOnce: the events one message tells carry one
// reading of the clock, and later messages later ones. The prompt alone
// tells the first seven events of a run; with a reading each, the clock
// would be read at least once an event.
func TestMessageReadsClockOnce(t *testing.T) {
	clock := &steppingClock{now: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	h := newHarness(t, `{"turns":[
		{"text":"Echoing.","tool_calls":[{"name":"echo","args":{"text":"pong"}}]},
		{"text":"Done."}]}`, &Env{Settings: Settings{Clock: clock.Now}})
	h.ok(&eventsv1.Prompt{Text: "ping"})
	h.waitFor("agent_end", 1)
	evs := h.since(0)
	for i, ev := range evs[1:] {
		if ev.GetTsUnixNano() < evs[i].GetTsUnixNano() {
			t.Errorf("event %d (%s) stamped before the one before it", ev.GetSeq(), events.Type(ev))
		}
	}
	start := evs[1].GetTsUnixNano() // prompt_received
	for _, ev := range evs[1 : 1+len(runStart)] {
		if ev.GetTsUnixNano() != start {
			t.Errorf("%s of the prompt stamped %d, want the prompt's %d", events.Type(ev), ev.GetTsUnixNano(), start)
		}
	}
	if end := evs[len(evs)-1].GetTsUnixNano(); end <= start {
		t.Errorf("agent_end stamped %d, not after the prompt's %d", end, start)
	}
	clock.mu.Lock()
	reads := clock.reads
	clock.mu.Unlock()
	if reads >= len(evs) {
		t.Errorf("the clock was read %d times for %d events", reads, len(evs))
	}
}
