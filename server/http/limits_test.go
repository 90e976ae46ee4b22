package http

import (
	"fmt"
	"testing"
	"time"

	"github.com/tack-run/tack/store/storetest"
)

// TestRequestLimiter: a sliding minute of the latest requests, refused
// ones included; the wait is until the oldest of them leaves the minute.
func TestRequestLimiter(t *testing.T) {
	clock := storetest.NewClock(time.Unix(1e9, 0))
	l := &requestLimiter{now: clock.Now, by: map[string]*requestWindow{}}
	for i, s := range []struct {
		advance time.Duration
		user    string
		limit   int
		wait    time.Duration
	}{
		{0, "a", 2, 0},
		{10 * time.Second, "a", 2, 0},
		{0, "a", 2, 60 * time.Second}, // refused, and counted: the latest two are of 10 s
		{0, "b", 2, 0},                // another user
		{0, "c", 0, 0},                // no limit
		{60 * time.Second, "a", 2, 0}, // at 70 s the request of 10 s is out
		{0, "a", 2, 0},                // and the refused one of 10 s too
		{0, "a", 2, 60 * time.Second}, // two at 70 s
		{60 * time.Second, "a", 2, 0},
		{time.Millisecond, "a", 2, 0},
		{0, "a", 2, 60 * time.Second},
	} {
		clock.Advance(s.advance)
		if got := l.take(s.user, s.limit); got != s.wait {
			t.Fatalf("step %d (%s): wait %v, want %v", i, s.user, got, s.wait)
		}
	}
	// A user quiet for a minute is forgotten at the next sweep.
	clock.Advance(time.Minute)
	for i := range sweepEvery {
		l.take(fmt.Sprint("u", i%3), 5)
	}
	if _, ok := l.by["a"]; ok || len(l.by) != 3 {
		t.Fatalf("after the sweep: %d windows, a's kept: %v", len(l.by), ok)
	}
}
