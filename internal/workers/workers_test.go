package workers

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
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

// TestBurstWorkersExit: after a burst of functions at once, work that
// comes one function at a time goes to the worker that became idle last,
// so it runs on a few workers and the burst's others run out their idle
// time and exit. Handed out first in first out, the work went to every
// worker in turn and kept all of them alive as long as it came.
func TestBurstWorkersExit(t *testing.T) {
	p := New(300 * time.Millisecond)
	const n = 50
	var started, done sync.WaitGroup
	started.Add(n)
	done.Add(n)
	release := make(chan struct{})
	for range n {
		p.Go(func() {
			started.Done()
			<-release
			done.Done()
		})
	}
	started.Wait()
	close(release)
	done.Wait()
	eventually.Within(t, 5*time.Second, func() error {
		if got := p.waiting(); got != n {
			return fmt.Errorf("%d workers idle, want %d", got, n)
		}
		return nil
	})
	ran := map[uint64]int{}
	ids := make(chan uint64)
	for range 1000 {
		p.Go(func() { ids <- goid() })
		ran[<-ids]++
	}
	if len(ran) > 5 {
		t.Fatalf("1,000 functions one at a time ran on %d of the %d idle workers, want a few", len(ran), n)
	}
	eventually.Within(t, 5*time.Second, func() error {
		if got := p.waiting(); got != 0 {
			return fmt.Errorf("%d workers still idle after their idle time", got)
		}
		return nil
	})
}

// waiting counts p's idle workers.
func (p *Pool) waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for w := p.ready.next; w != &p.ready; w = w.next {
		n++
	}
	return n
}

// TestPoolAcrossBubbles: a worker started in a testing/synctest bubble
// has a timer of the bubble's, lets go on the bubble's clock and is gone
// when the bubble ends; the pool then serves goroutines outside any
// bubble, whose workers have real timers. A timer shared by the pool's
// workers would be made in one and reset from the other, which the
// runtime refuses (fatal).
func TestPoolAcrossBubbles(t *testing.T) {
	p := New(time.Second)
	run := func() {
		done := make(chan struct{})
		p.Go(func() { close(done) })
		<-done
	}
	synctest.Test(t, func(t *testing.T) {
		run()
		time.Sleep(2 * time.Second) // the bubble's clock: the worker's idle time passes
		synctest.Wait()
		if got := p.waiting(); got != 0 {
			t.Fatalf("%d workers idle after their idle time in the bubble", got)
		}
	})
	run()
	run()
	eventually.Within(t, 5*time.Second, func() error {
		if got := p.waiting(); got != 0 {
			return fmt.Errorf("%d workers still idle after their idle time", got)
		}
		return nil
	})
}
