package workers

import (
	"sync"
	"time"
)

// Idle is how long a worker waits for another function before it exits.
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
// An idle worker waits on its channel alone, and a timer of its own
// (time.AfterFunc) lets it go once it has been idle for the pool's idle
// time. Selecting on the channel and a timer channel, and resetting the
// timer after every function, cost a scripted turn 9 % of its CPU
// (docs/benchmarks.md, finding 21). Each worker makes and resets its own
// timer, so a worker started in a testing/synctest bubble has a timer of
// that bubble's, as a worker outside has a real one.
type Pool struct {
	idle time.Duration

	mu sync.Mutex
	// ready lists the idle workers: ready.prev became idle last.
	ready worker
}

// worker is a goroutine of a Pool and its place in the pool's ready list.
type worker struct {
	// work takes the next function, or nil to exit; Go and expire take
	// the worker off the list before they send, so the send never waits.
	work       chan func()
	prev, next *worker
	// expiry lets the worker go (expire) once it has been idle for the
	// pool's idle time; the worker resets it each time it becomes idle.
	expiry *time.Timer
}

// New returns a Pool whose workers exit after idle without work.
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

// worker runs fn, then the functions Go hands it, until expire lets it
// go.
func (p *Pool) worker(fn func()) {
	w := &worker{work: make(chan func(), 1)}
	for fn != nil {
		fn()
		p.mu.Lock()
		w.prev, w.next = p.ready.prev, &p.ready
		w.prev.next, p.ready.prev = w, w
		p.mu.Unlock()
		if w.expiry == nil {
			w.expiry = time.AfterFunc(p.idle, func() { p.expire(w) })
		} else {
			w.expiry.Reset(p.idle)
		}
		fn = <-w.work
	}
	w.expiry.Stop() // expire fired it; a reset that raced with expire may have set it again
}

// expire lets w go if it is idle. A timer that fires as Go hands the
// worker a function finds it off the list, busy, and leaves it be; the
// worker resets the timer when it is idle again.
func (p *Pool) expire(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.next != nil {
		w.unlink()
		w.work <- nil
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
