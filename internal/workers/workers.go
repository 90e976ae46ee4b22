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
type Pool struct {
	idle time.Duration

	mu sync.Mutex
	// ready lists the idle workers: ready.prev became idle last.
	ready worker
}

// worker is a goroutine of a Pool and its place in the pool's ready list.
type worker struct {
	// work takes the next function; Go takes the worker off the list
	// before it sends, so the send never waits.
	work       chan func()
	prev, next *worker
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

// worker runs fn, then the functions handed to it, until it has been idle
// for p.idle.
func (p *Pool) worker(fn func()) {
	w := &worker{work: make(chan func(), 1)}
	fn()
	t := time.NewTimer(p.idle)
	defer t.Stop()
	for {
		p.mu.Lock()
		w.prev, w.next = p.ready.prev, &p.ready
		w.prev.next, p.ready.prev = w, w
		p.mu.Unlock()
		select {
		case fn = <-w.work:
		case <-t.C:
			p.mu.Lock()
			if w.next != nil { // still idle: nothing can reach it now
				w.unlink()
				p.mu.Unlock()
				return
			}
			p.mu.Unlock()
			fn = <-w.work // Go took it off the list: its function is on the way
		}
		fn()
		t.Reset(p.idle)
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
