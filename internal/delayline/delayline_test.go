package delayline

import (
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/tack-run/tack/internal/workers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// record is what the functions of a test's entries did: which entry ran,
// with which argument, when (in the bubble's time since the test began).
type record struct {
	mu   sync.Mutex
	t0   time.Time
	runs []run
}

type run struct {
	entry int
	arg   uint64
	at    time.Duration
}

func (r *record) fn(entry int) func(uint64) {
	return func(arg uint64) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.runs = append(r.runs, run{entry, arg, time.Since(r.t0)})
	}
}

// expect fails t unless the entries ran as want says, in that order.
func (r *record) expect(t *testing.T, want ...run) {
	t.Helper()
	if got := r.got(); !slices.Equal(got, want) {
		t.Fatalf("runs %v, want %v", got, want)
	}
}

// start returns a record whose clock starts now and a Line of a second.
func start() (*record, *Line) { return &record{t0: time.Now()}, New(time.Second) }

// armed reads l.armed under its lock.
func armed(l *Line) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.armed
}

func (r *record) got() []run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.runs)
}

// TestRunsInOrderAfterTheDelay starts entries at different times and
// checks that each runs exactly its delay after its start, in the order
// started, with its argument.
func TestRunsInOrderAfterTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := start()
		a, b, c := l.Entry(r.fn(0)), l.Entry(r.fn(1)), l.Entry(r.fn(2))
		a.Start(10)
		time.Sleep(300 * time.Millisecond)
		b.Start(11)
		time.Sleep(300 * time.Millisecond)
		c.Start(12)
		time.Sleep(5 * time.Second)
		r.expect(t, run{0, 10, time.Second}, run{1, 11, 1300 * time.Millisecond}, run{2, 12, 1600 * time.Millisecond})
		if armed(l) {
			t.Fatal("an empty line is still armed")
		}
	})
}

// TestRestartMovesToTheTail restarts a pending entry: it runs once, its
// delay after the restart and with the new argument, after an entry
// started between its two starts.
func TestRestartMovesToTheTail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := start()
		a, b := l.Entry(r.fn(0)), l.Entry(r.fn(1))
		a.Start(1)
		time.Sleep(100 * time.Millisecond)
		b.Start(2)
		time.Sleep(100 * time.Millisecond)
		a.Start(3)
		time.Sleep(5 * time.Second)
		r.expect(t, run{1, 2, 1100 * time.Millisecond}, run{0, 3, 1200 * time.Millisecond})
	})
}

// TestStop stops pending entries, the head among them: they never run,
// Stop reports whether each was pending, the others run on time, and a
// line whose last entry is stopped disarms its timer.
func TestStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := start()
		a, b, c := l.Entry(r.fn(0)), l.Entry(r.fn(1)), l.Entry(r.fn(2))
		a.Start(0)
		b.Start(0)
		c.Start(0)
		if !a.Stop() || !c.Stop() {
			t.Fatal("Stop of a pending entry reported false")
		}
		if a.Stop() {
			t.Fatal("a second Stop reported true")
		}
		time.Sleep(5 * time.Second)
		r.expect(t, run{1, 0, time.Second})
		if b.Stop() {
			t.Fatal("Stop of an entry that ran reported true")
		}
		b.Start(0)
		b.Stop()
		if armed(l) {
			t.Fatal("a line with no entry left is still armed")
		}
	})
}

// TestFunctionRestartsItself checks that a function may start entries,
// its own included, from the line's goroutine.
func TestFunctionRestartsItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := start()
		var e *Entry
		e = l.Entry(func(n uint64) {
			r.fn(0)(n)
			if n < 3 {
				e.Start(n + 1)
			}
		})
		e.Start(1)
		time.Sleep(10 * time.Second)
		r.expect(t, run{0, 1, time.Second}, run{0, 2, 2 * time.Second}, run{0, 3, 3 * time.Second})
	})
}

// TestConcurrent starts, restarts and stops entries from many goroutines
// at once (run it with -race): every entry whose last call was a Start
// runs exactly once, with that Start's argument; the others never run.
func TestConcurrent(t *testing.T) {
	const goroutines, each = 8, 200
	l := New(20 * time.Millisecond)
	var mu sync.Mutex
	ran := map[int][]uint64{}
	want := map[int]uint64{}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				id := g*each + i
				e := l.Entry(func(arg uint64) {
					mu.Lock()
					ran[id] = append(ran[id], arg)
					mu.Unlock()
				})
				e.Start(1)
				if i%3 == 0 {
					e.Stop()
					continue
				}
				last := uint64(1)
				if i%3 == 1 {
					last = 2
					e.Start(last)
				}
				mu.Lock()
				want[id] = last
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(ran)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // a stopped entry that ran would show by now
	mu.Lock()
	defer mu.Unlock()
	for id, args := range ran {
		w, ok := want[id]
		if !ok || len(args) != 1 || args[0] != w {
			t.Fatalf("entry %d ran with %v, want once with %d (pending: %v)", id, args, w, ok)
		}
	}
	if len(ran) != len(want) {
		t.Fatalf("%d entries ran, want %d", len(ran), len(want))
	}
}

// TestDueStormReusesWorkers lets thousands of entries fall due at once,
// each handing work to a pool of workers, as a session's posts schedule
// its mailbox on one: the line yields after each, so the work runs on a
// few reused workers, not on a new goroutine per entry.
func TestDueStormReusesWorkers(t *testing.T) {
	const n = 5000
	p := workers.New(workers.Idle)
	l := New(50 * time.Millisecond)
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		l.Entry(func(uint64) {
			p.Go(func() {
				spin(20 * time.Microsecond)
				done.Done()
			})
		}).Start(0)
	}
	before := created()
	done.Wait()
	if c := created() - before; c > n/10 {
		t.Fatalf("%d goroutines started for %d entries due at once", c, n)
	} else {
		t.Logf("%d goroutines started for %d entries due at once", c, n)
	}
}

// spin keeps its goroutine busy for d.
func spin(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}

// created is how many goroutines the process has started.
func created() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
