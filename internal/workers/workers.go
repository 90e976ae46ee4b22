package workers

import (
	"sync"
	"time"
)

// Idle is how long a worker stays idle before it exits: between Idle and
// twice that.
const Idle = 100 * time.Millisecond

// Pool runs functions on reused goroutines. The zero Pool is not usable;
// make one with New. A Pool is safe for concurrent use.
//
// A function goes to the worker that became idle last (last in, first
// out), so the workers a burst started and the work after it does not
// need run out their idle time and exit: the pool keeps about as many as
// the work keeps busy. Handed out in turn, first in first out, every
// worker of a burst got work again before its idle time ran out as long
// as any work came, and a storm of 10,000 sessions parking at once left
// a thousand goroutines and their stacks behind it (issue 30, finding 19).
//
// An idle worker waits on its channel alone. One timer of the pool's, set
// while any worker is idle, lets go every idle period of the workers that
// stayed idle through the whole period before. A timer of each worker's,
// reset after every function and selected on with its channel, cost a
// scripted turn 9 % of its CPU (docs/benchmarks.md, finding 21).
type Pool struct {
	idle time.Duration

	mu sync.Mutex
	// ready lists the idle workers: ready.next became idle first,
	// ready.prev last.
	ready worker
	// reaper lets go of the workers that stay idle (reap); it is set
	// while reaping.
	reaper  *time.Timer
	reaping bool
}

// worker is a goroutine of a Pool and its place in the pool's ready list.
type worker struct {
	// work takes the next function, or nil to exit; Go and reap take the
	// worker off the list before they send, so the send never waits.
	work       chan func()
	prev, next *worker
	// stale says the worker was idle at the last reap already.
	stale bool
}

// New returns a Pool whose workers exit after idle without work (up to
// twice that).
func New(idle time.Duration) *Pool {
	p := &Pool{idle: idle}
	p.ready.prev, p.ready.next = &p.ready, &p.ready
	return p
}

// Default is the Pool of Go and Dispatcher.
var Default = New(Idle)

// Go runs fn on Default.
func Go(fn func()) { Default.Go(fn) }

// Go runs fn on the worker that became idle last, or on a new goroutine
// that becomes a worker once fn returns. It never blocks and never queues:
// fn starts at once, as with the go statement.
func (p *Pool) Go(fn func()) {
	p.mu.Lock()
	w := p.ready.prev
	if w == &p.ready {
		p.mu.Unlock()
		go p.worker(fn)
		return
	}
	w.unlink()
	p.mu.Unlock()
	w.work <- fn
}

// worker runs fn, then the functions Go hands it, until reap lets it go.
func (p *Pool) worker(fn func()) {
	w := &worker{work: make(chan func(), 1)}
	for fn != nil {
		fn()
		p.mu.Lock()
		w.prev, w.next, w.stale = p.ready.prev, &p.ready, false
		w.prev.next, p.ready.prev = w, w
		if !p.reaping {
			p.reaping = true
			if p.reaper == nil {
				p.reaper = time.AfterFunc(p.idle, p.reap)
			} else {
				p.reaper.Reset(p.idle)
			}
		}
		p.mu.Unlock()
		fn = <-w.work
	}
}

// reap lets go of the workers that were idle at the last reap and still
// are, and marks the others, every idle period while any worker is idle.
// The list is in the order the workers became idle, so the ones to let
// go are at its head.
func (p *Pool) reap() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for w := p.ready.next; w != &p.ready && w.stale; w = p.ready.next {
		w.unlink()
		w.work <- nil
	}
	for w := p.ready.next; w != &p.ready; w = w.next {
		w.stale = true
	}
	if p.reaping = p.ready.next != &p.ready; p.reaping {
		p.reaper.Reset(p.idle)
	}
}

// unlink takes w off the ready list; the pool's lock is held.
func (w *worker) unlink() {
	w.prev.next, w.next.prev = w.next, w.prev
	w.prev, w.next = nil, nil
}

// Dispatcher is a protoactor actor.Dispatcher that runs mailboxes on a
// Pool (see Pool.Dispatcher).
type Dispatcher struct {
	pool       *Pool
	throughput int
}

// Dispatcher returns a Dispatcher on p whose mailboxes process up to
// throughput messages before they yield to others, as protoactor's own
// dispatcher does.
func (p *Pool) Dispatcher(throughput int) Dispatcher {
	return Dispatcher{pool: p, throughput: throughput}
}

// Schedule runs fn on the Pool.
func (d Dispatcher) Schedule(fn func()) { d.pool.Go(fn) }

// Throughput returns how many messages a mailbox processes in one go.
func (d Dispatcher) Throughput() int { return d.throughput }
