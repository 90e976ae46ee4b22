// Package replies waits for the answers of requests to actors without a
// protoactor future per request.
//
// A future is a process of its own: protoactor makes an id for it,
// registers it in the actor system's process table, starts a timer and
// makes a condition variable, then takes it all down once the answer
// came. That was about a third of the CPU of a command to a session that
// answers at once (BenchmarkRequest in the tack package).
//
// A Pool keeps slots instead: a slot is registered once and reused. Each
// request gets a PID of the slot's own with a new RequestId, the field
// protoactor keeps for this and carries through remote, so an answer
// that comes late, after its request timed out, or a second answer to
// one request, is told from the answer the slot waits for now and never
// reaches a later request.
package replies

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// keep is how many idle slots a Pool keeps; a slot given back beyond
// that leaves the process table.
const keep = 1024

// Pool lends slots for requests to the actors of one actor system. The
// zero Pool is not usable; make one with New. A Pool is safe for
// concurrent use.
type Pool struct {
	system *actor.ActorSystem
	mu     sync.Mutex
	free   []*slot
	// lent holds the slots whose requests wait for an answer, which
	// Close gives them.
	lent   map[*slot]struct{}
	closed bool
}

// New returns a Pool whose slots are processes of system.
func New(system *actor.ActorSystem) *Pool {
	return &Pool{system: system, lent: map[*slot]struct{}{}}
}

// Call is one request's wait for its answer. Open one, send the request
// with Sender as its sender, then Wait: every Call opened must be waited
// for once, which gives its slot back.
//
// A request is two steps rather than one call taking the sending as a
// function so that the sending runs in the caller's own frame: a command
// sent from a goroutine that has just started then fits in its first
// stack (TestAbortFitsAFreshStack in the tack package).
type Call struct {
	// Sender is the PID the answer must go to.
	Sender *actor.PID
	pool   *Pool
	s      *slot
	id     uint32
}

// Open starts a request: its answer is to be sent to the Call's Sender.
// On a closed Pool the request is answered at once with
// actor.ErrDeadLetter: the actors it could reach are gone.
func (p *Pool) Open() Call {
	s, id, closed := p.get()
	if closed {
		s.answerNow(actor.ErrDeadLetter)
	}
	return Call{Sender: &actor.PID{Address: s.pid.Address, Id: s.pid.Id, RequestId: id}, pool: p, s: s, id: id}
}

// Wait waits up to timeout for the answer to c. It returns what the actor
// answered, or actor.ErrDeadLetter if the message reached no actor, or
// actor.ErrTimeout: the errors of a protoactor future. A timeout must be
// positive.
//
// The timeout comes through the answers channel too (slot.expire), so
// that Wait blocks in a plain receive: a select over the answers and a
// timer channel took twice the stack.
func (c Call) Wait(timeout time.Duration) (any, error) {
	s := c.s
	s.timer.Reset(timeout)
	for {
		a := <-s.answers
		if a.request != c.id {
			// An answer to an earlier request that slipped in as this
			// one began: read past it, and retire the slot rather than
			// risk another.
			s.stale = true
			continue
		}
		if a.err == actor.ErrTimeout {
			s.stale = true
		} else if !s.timer.Stop() {
			// The timeout fired as the answer came: it may still be on
			// its way to the channel, so the slot takes no other request.
			s.stale = true
		}
		c.pool.put(s)
		return a.msg, a.err
	}
}

// get lends a slot (an idle one, or a new one registered outside the
// lock, so that a burst of first requests does not queue on it) for a
// request of its own, and tells whether the Pool is closed: Close
// answers a slot lent before it, Open one lent after.
func (p *Pool) get() (s *slot, request uint32, closed bool) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		s = p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	} else {
		p.mu.Unlock()
		s = &slot{answers: make(chan answer, 2)}
		s.timer = time.AfterFunc(time.Hour, s.expire)
		s.timer.Stop()
		s.pid, _ = p.system.ProcessRegistry.Add(s, "reply"+p.system.ProcessRegistry.NextId())
		p.mu.Lock()
	}
	p.lent[s] = struct{}{}
	request = s.request.Add(1)
	closed = p.closed
	p.mu.Unlock()
	return s, request, closed
}

// Close takes the idle slots out of the process table, and each slot
// still lent once its request ends: an actor system that outlives the
// Pool (one its owner passed in) keeps none of them. A request still
// waiting is answered with actor.ErrDeadLetter at once: the actors it
// went to are being stopped, and one stopping may never answer, which
// left its sender waiting out its whole timeout.
func (p *Pool) Close() {
	p.mu.Lock()
	free := p.free
	p.free, p.closed = nil, true
	waiting := make([]*slot, 0, len(p.lent))
	for s := range p.lent {
		waiting = append(waiting, s)
	}
	p.mu.Unlock()
	for _, s := range free {
		p.retire(s)
	}
	for _, s := range waiting {
		s.answerNow(actor.ErrDeadLetter)
	}
}

// put gives s back once its request had its answer.
func (p *Pool) put(s *slot) {
	p.mu.Lock()
	delete(p.lent, s)
	if s.stale || p.closed || len(p.free) == keep {
		p.mu.Unlock()
		p.retire(s)
		return
	}
	p.free = append(p.free, s)
	p.mu.Unlock()
}

// retire takes s out of use for good: an answer still on its way goes to
// the dead letters, as one to a future that timed out does.
func (p *Pool) retire(s *slot) {
	s.request.Add(1)
	p.system.ProcessRegistry.Remove(s.pid)
}

// slot is a registered process that takes the answers of one request at
// a time.
type slot struct {
	pid *actor.PID
	// request is the RequestId of the request the slot waits for.
	request atomic.Uint32
	// answers holds an answer to the current request, and room for one
	// to an earlier request that passed the check in deliver just
	// before the current one began.
	answers chan answer
	// timer calls expire once the current request's timeout passed.
	timer *time.Timer
	// stale is set by the requester when it read past such an answer.
	stale bool
}

type answer struct {
	request uint32
	msg     any
	err     error
}

var _ actor.Process = (*slot)(nil)

// SendUserMessage takes an answer sent to pid, a PID of the slot's.
func (s *slot) SendUserMessage(pid *actor.PID, message any) {
	_, msg, _ := actor.UnwrapEnvelope(message)
	if _, ok := msg.(*actor.DeadLetterResponse); ok {
		s.deliver(pid, answer{err: actor.ErrDeadLetter})
		return
	}
	s.deliver(pid, answer{msg: msg})
}

// SendSystemMessage takes a system message as the answer, as a future does.
func (s *slot) SendSystemMessage(pid *actor.PID, message any) {
	s.deliver(pid, answer{msg: message})
}

// Stop does nothing: a slot leaves the process table when its Pool retires it.
func (s *slot) Stop(*actor.PID) {}

// expire answers the current request with actor.ErrTimeout.
func (s *slot) expire() { s.answerNow(actor.ErrTimeout) }

// answerNow answers the current request with err.
func (s *slot) answerNow(err error) {
	s.deliver(&actor.PID{RequestId: s.request.Load()}, answer{err: err})
}

// deliver hands a over if it answers the request the slot waits for; a
// late answer, or a second one, is dropped.
func (s *slot) deliver(pid *actor.PID, a answer) {
	if pid == nil || pid.RequestId != s.request.Load() {
		return
	}
	a.request = pid.RequestId
	select {
	case s.answers <- a:
	default:
	}
}
