// Package eventually waits, in tests, for something running beside the test
// (a server, an actor, a child process, another cluster member) to reach a
// state the test can only observe from outside: it asks again, with a short
// backoff, until the answer is yes or the time given has passed.
//
// It is the last resort for waiting. When the code under test takes an
// injected clock, or the goroutines involved can run inside a testing/synctest
// bubble, use that instead: it neither sleeps nor guesses a time limit.
package eventually

import (
	"testing"
	"time"
)

// The backoff between two tries starts at firstWait and doubles up to maxWait.
const (
	firstWait = 5 * time.Millisecond
	maxWait   = 100 * time.Millisecond
)

// Within calls check until it returns nil, waiting a backoff between tries
// (5 ms, doubling up to 100 ms). If check still fails once d has passed, Within
// fails the test with t.Fatalf, giving how long it waited and check's last
// error, which should therefore say what is still wrong in the test's own
// words, with the latest state: fmt.Errorf("the buffer still holds %d events", n).
// check runs at least once, and a last time when d has passed.
func Within(t testing.TB, d time.Duration, check func() error) {
	t.Helper()
	Value(t, d, func() (struct{}, error) { return struct{}{}, check() })
}

// Value is Within for a check that also returns what it found: it returns the
// value of check's first nil error, as a state read the test goes on to inspect.
func Value[T any](t testing.TB, d time.Duration, check func() (T, error)) T {
	t.Helper()
	start := time.Now()
	deadline := start.Add(d)
	wait := firstWait
	for {
		v, err := check()
		if err == nil {
			return v
		}
		now := time.Now()
		if !now.Before(deadline) {
			t.Fatalf("after %v: %v", now.Sub(start).Round(time.Millisecond), err)
			return v
		}
		time.Sleep(min(wait, deadline.Sub(now)))
		wait = min(2*wait, maxWait)
	}
}
