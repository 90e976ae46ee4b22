package workers

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tack-run/tack/internal/eventually"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestGoRunsEveryFunction runs functions from many goroutines at once and
// checks that each ran exactly once, and that concurrent ones were not
// queued behind each other (a function blocked until all have started).
func TestGoRunsEveryFunction(t *testing.T) {
	p := New(50 * time.Millisecond)
	const n = 200
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	ran := make([]int, n)
	var done sync.WaitGroup
	done.Add(n)
	for i := range n {
		go p.Go(func() {
			defer done.Done()
			ran[i]++
			started.Done()
			release.Wait()
		})
	}
	started.Wait() // all n run at once: none waits for a worker
	release.Done()
	done.Wait()
	for i, c := range ran {
		if c != 1 {
			t.Fatalf("function %d ran %d times", i, c)
		}
	}
}

// TestWorkerIsReused checks that a function handed over while a worker is
// idle runs on that worker, and that the worker exits after its idle time.
func TestWorkerIsReused(t *testing.T) {
	p := New(200 * time.Millisecond)
	ids := make(chan uint64, 2)
	p.Go(func() { ids <- goid() })
	first := <-ids
	// The worker is idle once it waits on the channel; hand over until a
	// function lands on it (the first send may race its return to the loop).
	eventually.Within(t, 5*time.Second, func() error {
		p.Go(func() { ids <- goid() })
		if <-ids != first {
			return errors.New("no function ran on the idle worker")
		}
		return nil
	})
	// goleak (TestMain) fails the package if the worker outlives its idle
	// time.
}

// goid returns the current goroutine's id, from its stack header.
func goid() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	var id uint64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
