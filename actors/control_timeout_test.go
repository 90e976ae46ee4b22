package actors

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// TestMsDuration: milliseconds past what a time.Duration holds saturate
// instead of wrapping around.
func TestMsDuration(t *testing.T) {
	for _, c := range []struct {
		ms   int64
		want time.Duration
	}{
		{0, 0},
		{1, time.Millisecond},
		{20, 20 * time.Millisecond},
		{-5, -5 * time.Millisecond},
		{9223372036854, 9223372036854 * time.Millisecond}, // the most a Duration holds
		{9223372036855, math.MaxInt64},
		{18446744073710, math.MaxInt64}, // wrapped to ~0.45 ms
		{1e13, math.MaxInt64},           // wrapped to a negative duration
		{math.MaxInt64, math.MaxInt64},  // wrapped to -1 ms
		{math.MinInt64, math.MinInt64},
	} {
		if got := msDuration(c.ms); got != c.want {
			t.Errorf("msDuration(%d) = %v, want %v", c.ms, got, c.want)
		}
	}
}

// TestAbortTimeoutPastDuration: an abort at after_tools whose timeout_ms
// is more than a time.Duration holds waits for its batch, as one of 10 s
// does, instead of acting now at once.
func TestAbortTimeoutPastDuration(t *testing.T) {
	for _, ms := range []int64{10000, math.MaxInt64, 1e13, 18446744073710} {
		t.Run(fmt.Sprint(ms), func(t *testing.T) {
			c := newCell(t, "executing_tools", nil)
			mark := c.rec.Len()
			succeeds(t, c.send(&eventsv1.Abort{At: string(events.AtAfterTools), TimeoutMs: ms}))
			time.Sleep(50 * time.Millisecond) // a timeout that wrapped around has fired by now
			c.check(mark, step{
				now: one("agent_abort"), st: busyWant("executing_tools"),
				after:   seq(toolEnd, toolEnd, twoResults, one("turn_end"), abortEnd),
				history: []string{"user:go", "assistant:", "tool:hold done", "tool:hold_immune done"},
			})
		})
	}
}
