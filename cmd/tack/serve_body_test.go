package main

import (
	"testing"
	"time"
)

// TestServeRefusesMaxBodyBytes: a --max-body-bytes that would make every
// request with a body 413 is refused before anything listens.
func TestServeRefusesMaxBodyBytes(t *testing.T) {
	for _, v := range []string{"-1", "0", "-9223372036854775808"} {
		done := make(chan error, 1)
		go func() { done <- serve([]string{"--addr", "127.0.0.1:0", "--store", "memory", "--max-body-bytes", v}) }()
		select {
		case err := <-done:
			if want := "--max-body-bytes must be positive, not " + v; err == nil || err.Error() != want {
				t.Errorf("tack serve --max-body-bytes %s: %v, want %q", v, err, want)
			}
		case <-time.After(10 * time.Second): // it serves until a signal: left running, the test fails
			t.Fatalf("tack serve --max-body-bytes %s started serving", v)
		}
	}
}
