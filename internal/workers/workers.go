package workers

import "time"

// Idle is how long a worker waits for another function before it exits.
const Idle = 100 * time.Millisecond

// Pool runs functions on reused goroutines. The zero Pool is not usable;
// make one with New. A Pool is safe for concurrent use.
type Pool struct {
	work chan func()
	idle time.Duration
}

// New returns a Pool whose workers exit after idle without work.
func New(idle time.Duration) *Pool {
	return &Pool{work: make(chan func()), idle: idle}
}

// Default is the Pool of Go and Dispatcher.
var Default = New(Idle)

// Go runs fn on Default.
func Go(fn func()) { Default.Go(fn) }

// Go runs fn on an idle worker, or on a new goroutine that becomes a worker
// once fn returns. It never blocks and never queues: fn starts at once, as
// with the go statement.
func (p *Pool) Go(fn func()) {
	select {
	case p.work <- fn:
	default:
		go p.worker(fn)
	}
}

// worker runs fn, then the functions handed to it, until it has been idle
// for p.idle.
func (p *Pool) worker(fn func()) {
	fn()
	t := time.NewTimer(p.idle)
	defer t.Stop()
	for {
		select {
		case fn := <-p.work:
			fn()
			t.Reset(p.idle)
		case <-t.C:
			return
		}
	}
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
