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
	closed bool
}

// New returns a Pool whose slots are processes of system.
func New(system *actor.ActorSystem) *Pool { return &Pool{system: system} }

// Request calls send with the PID its answer must go to, as the sender
// of the message send sends, and waits up to timeout for that answer. It
// returns what the actor answered, or actor.ErrDeadLetter if the message
// reached no actor, or actor.ErrTimeout: the errors of a protoactor
// future. A timeout must be positive.
func (p *Pool) Request(timeout time.Duration, send func(sender *actor.PID)) (any, error) {
	s := p.get()
	id := s.request.Add(1)
	send(&actor.PID{Address: s.pid.Address, Id: s.pid.Id, RequestId: id})
	s.timer.Reset(timeout)
	for {
		select {
		case a := <-s.answers:
			if a.request != id {
				// An answer to an earlier request that slipped in as
				// this one began: read past it, and retire the slot
				// rather than risk another.
				s.stale = true
				continue
			}
			s.timer.Stop()
			p.put(s)
			return a.msg, a.err
		case <-s.timer.C:
			p.retire(s)
			return nil, actor.ErrTimeout
		}
	}
}

func (p *Pool) get() *slot {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return s
	}
	p.mu.Unlock()
	s := &slot{answers: make(chan answer, 2), timer: time.NewTimer(time.Hour)}
	s.timer.Stop()
	s.pid, _ = p.system.ProcessRegistry.Add(s, "reply"+p.system.ProcessRegistry.NextId())
	return s
}

// Close takes the idle slots out of the process table, and each slot
// still lent once its request ends: an actor system that outlives the
// Pool (one its owner passed in) keeps none of them.
func (p *Pool) Close() {
	p.mu.Lock()
	free := p.free
	p.free, p.closed = nil, true
	p.mu.Unlock()
	for _, s := range free {
		p.retire(s)
	}
}

// put gives s back once its request had its answer.
func (p *Pool) put(s *slot) {
	p.mu.Lock()
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
	timer   *time.Timer
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
