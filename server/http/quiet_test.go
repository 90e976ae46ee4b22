package http

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestQuiet: a stream's waits share one context while events keep
// coming, the context ends an interval after the last wait began, the
// next wait then gets a fresh one, and stop releases it.
func TestQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()
		q := newQuiet(parent, time.Second)
		first := q.arm()
		for range 5 { // an event every 600 ms: never quiet for a second
			time.Sleep(600 * time.Millisecond)
			if first.Err() != nil {
				t.Fatal("the wait's context ended while events came")
			}
			if q.arm() != first {
				t.Fatal("a wait before the interval passed got a new context")
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if first.Err() == nil {
			t.Fatal("the context lived on a second after the last wait began")
		}
		second := q.arm()
		if second == first || second.Err() != nil {
			t.Fatalf("the wait after a quiet second got %v (err %v), want a fresh context", second, second.Err())
		}
		q.stop()
		if second.Err() == nil {
			t.Fatal("stop left the context live")
		}
	})
}
