package eventually

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records the message and ends only the
// goroutine it runs on, as the real one does, without failing the real test.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls Within on a recorder in a goroutine of its own and returns what
// it recorded and whether Within returned (rather than ending the goroutine).
func run(d time.Duration, check func() error) (fatal string, returned bool) {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Within(r, d, check)
		returned = true
	}()
	<-done
	return r.fatal, returned
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failures  int // check fails this many times, then succeeds
		d         time.Duration
		wantTries int
		wantFatal string // "" when Within returns
	}{
		{name: "true at once", failures: 0, d: time.Second, wantTries: 1},
		{name: "true after some tries", failures: 3, d: 10 * time.Second, wantTries: 4},
		{name: "never true", failures: 1 << 30, d: 50 * time.Millisecond, wantFatal: "the buffer still holds"},
		{name: "no time at all", failures: 1 << 30, d: 0, wantTries: 1, wantFatal: "the buffer still holds 1 events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			start := time.Now()
			fatal, returned := run(tc.d, func() error {
				tries++
				if tries > tc.failures {
					return nil
				}
				return fmt.Errorf("the buffer still holds %d events", tries)
			})
			took := time.Since(start)
			if tc.wantFatal == "" {
				if !returned || fatal != "" {
					t.Fatalf("Within failed the test: %q", fatal)
				}
				if tries != tc.wantTries {
					t.Errorf("check ran %d times, want %d", tries, tc.wantTries)
				}
				return
			}
			if returned {
				t.Fatal("Within returned after failing the test")
			}
			if took < tc.d {
				t.Errorf("Within gave up after %v, before %v", took, tc.d)
			}
			if tc.wantTries != 0 && tries != tc.wantTries {
				t.Errorf("check ran %d times, want %d", tries, tc.wantTries)
			}
			last := fmt.Sprintf("the buffer still holds %d events", tries)
			if !strings.HasPrefix(fatal, "after ") || !strings.HasSuffix(fatal, ": "+last) || !strings.Contains(fatal, tc.wantFatal) {
				t.Errorf("Fatalf(%q), want \"after <how long>: %s\"", fatal, last)
			}
		})
	}
}

// TestWithinBacksOff: the waits between tries double from 5 ms to at most
// 100 ms, so a check is asked a few dozen times in a few seconds, not
// thousands.
func TestWithinBacksOff(t *testing.T) {
	tries := 0
	fatal, _ := run(time.Second, func() error { tries++; return errors.New("not yet") })
	if fatal == "" {
		t.Fatal("Within did not fail the test")
	}
	// 5+10+20+40+80 = 155 ms in 6 tries, then one every 100 ms: about 15
	// (fewer on a loaded machine; without the backoff, 200).
	if tries < 3 || tries > 20 {
		t.Errorf("check ran %d times in a second, want about 15", tries)
	}
}

func TestValue(t *testing.T) {
	n := 0
	got := Value(t, 10*time.Second, func() (int, error) {
		n++
		if n < 3 {
			return n, errors.New("too small")
		}
		return n, nil
	})
	if got != 3 {
		t.Errorf("Value = %d, want 3, the value of the first nil error", got)
	}
}
