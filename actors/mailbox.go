package actors

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/internal/workers"
)

// mailbox is a session actor's mailbox. It runs messages as protoactor's
// default unbounded mailbox does — system messages first, SuspendMailbox
// and ResumeMailbox obeyed, at most the dispatcher's throughput in one go
// before the goroutine yields, a panic escalated to the actor — with
// three differences:
//
//   - It allocates its queues on first use and gives a grown queue's
//     array back once it drains: the default mailbox keeps a ten-slot ring
//     and a lock-free queue's node from its start on, about 380 bytes that
//     every idle session held for nothing.
//   - What the session's own goroutines and timers report (a report: a
//     model stream's chunks, a tool's progress and result, a child's
//     events, a write that landed) waits in a lane of its own, behind
//     every command: a provider that streams faster than the session
//     publishes piles up chunks, a batch of tools that end together piles
//     up results whose after_tool hooks each take their plugins' time,
//     and an abort, a subscribe or any command queued behind them used to
//     wait seconds. Each lane keeps its order; a command that overtakes
//     reports is handled as if it had come before they were made, which
//     it may always have (an abort then settles as interrupted a tool
//     whose result waited behind it, the chunks of an aborted request are
//     dropped as stale, and what the abort commits is the text its
//     subscribers were told).
//   - Once its actor has stopped, the user messages still queued, and any
//     that reach it later, go to the actor (mortal), which answers a
//     request among them with a dead letter, as protoactor answers one
//     sent to a stopped actor, instead of dropping it unanswered.
type mailbox struct {
	mu   sync.Mutex
	sys  fifo
	user fifo
	// reports holds the session's reports, behind user (report).
	reports fifo
	// users counts the user messages queued, for UserMessageCount.
	users     atomic.Int32
	running   atomic.Bool
	suspended atomic.Bool
	// dead is set, under mu, once the actor has stopped: what comes
	// after goes to the actor's tooLate.
	dead       bool
	invoker    actor.MessageInvoker
	dispatcher actor.Dispatcher
	// processor is m.process, made once: a method value made at each
	// schedule was an allocation each time an idle mailbox got work (the
	// field fits in the size class the mailbox already had).
	processor func()
}

// newMailbox is the actor.MailboxProducer of session actors.
func newMailbox() actor.Mailbox { return &mailbox{} }

// keepSlots is the largest array a drained queue of user messages or
// reports keeps for its next messages; a larger one, grown by a backlog,
// is given back. A drained queue of system messages, which come at a
// session's start and stop, keeps none: an idle session would keep the
// slot its Started took (16 bytes).
const keepSlots = 8

// fifo is a queue of messages in a slice: pop takes from head, push
// appends, and the slots before head are reused once it drains.
type fifo struct {
	buf  []any
	head int
}

func (q *fifo) push(m any) {
	if len(q.buf) == cap(q.buf) && q.head > 0 {
		// Full but with popped slots in front: move the rest down first.
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, m)
}

// take empties the queue and returns what it held, in order.
func (q *fifo) take() []any {
	left := q.buf[q.head:]
	q.buf, q.head = nil, 0
	return left
}

// pop takes the oldest message; a queue it drains keeps its array for the
// next messages if it has at most keep slots.
func (q *fifo) pop(keep int) (any, bool) {
	if q.head == len(q.buf) {
		return nil, false
	}
	m := q.buf[q.head]
	q.buf[q.head] = nil
	q.head++
	if q.head == len(q.buf) {
		q.head = 0
		if cap(q.buf) > keep {
			q.buf = nil
		} else {
			q.buf = q.buf[:0]
		}
	}
	return m, true
}

// PostUserMessage queues a message for the actor, or hands it to the
// actor's tooLate once the actor has stopped.
func (m *mailbox) PostUserMessage(msg any) {
	m.mu.Lock()
	if m.dead {
		m.mu.Unlock()
		m.mortal().tooLate(msg)
		return
	}
	if _, ok := unwrap(msg).(report); ok {
		m.reports.push(msg)
	} else {
		m.user.push(msg)
	}
	m.mu.Unlock()
	m.users.Add(1)
	m.schedule()
}

// PostSystemMessage queues a system message, which runs before any user
// message still queued.
func (m *mailbox) PostSystemMessage(msg any) {
	m.mu.Lock()
	m.sys.push(msg)
	m.mu.Unlock()
	m.schedule()
}

// RegisterHandlers sets what runs the messages and on which goroutines.
// A session learns its mailbox here (home.box): protoactor made the
// actor just before.
func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.invoker, m.dispatcher = invoker, dispatcher
	m.processor = m.process
	if s, ok := m.mortal().(*session); ok {
		s.home.box = m
	}
}

// system is the actor system of the mailbox's actor.
func (m *mailbox) system() *actor.ActorSystem {
	return m.invoker.(actor.Context).ActorSystem()
}

// holds reports whether a user message waiting to run matches.
func (m *mailbox) holds(match func(msg any) bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.ContainsFunc(m.user.buf[m.user.head:], match)
}

// Start is called once the actor is set up; there is nothing to start.
func (m *mailbox) Start() {}

// UserMessageCount is the number of user messages queued.
func (m *mailbox) UserMessageCount() int { return int(m.users.Load()) }

func (m *mailbox) schedule() {
	if !m.running.CompareAndSwap(false, true) {
		return
	}
	if d, ok := m.dispatcher.(workers.Dispatcher); ok {
		// Called on the concrete type, Schedule is inlined: the sender
		// of a command needs a frame less of stack (the tack package's
		// local.send says why).
		d.Schedule(m.processor)
		return
	}
	m.dispatcher.Schedule(m.processor)
}

// process runs queued messages until none is left, then checks again
// for one posted after the loop ended, as the default mailbox does.
func (m *mailbox) process() {
	for {
		m.run()
		m.running.Store(false)
		if !m.pending() || !m.running.CompareAndSwap(false, true) {
			return
		}
	}
}

// pending reports whether a message may run now.
func (m *mailbox) pending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sys.buf) > 0 || (!m.suspended.Load() && len(m.user.buf)+len(m.reports.buf) > 0)
}

// next pops the next message to run: a system message first, then unless
// the mailbox is suspended a command, a report last.
func (m *mailbox) next() (msg any, system bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if msg, ok := m.sys.pop(0); ok {
		return msg, true
	}
	if m.suspended.Load() {
		return nil, false
	}
	if msg, ok := m.user.pop(keepSlots); ok {
		return msg, false
	}
	msg, _ = m.reports.pop(keepSlots)
	release(msg)
	return msg, false
}

// release gives a stream's window back the room a chunk took.
func release(msg any) {
	if c, ok := unwrap(msg).(*streamChunk); ok && c.window != nil {
		c.window.release()
	}
}

// unwrap is msg, or the message of msg's envelope (a sender with headers
// or middleware sent it).
func unwrap(msg any) any {
	if env, ok := msg.(*actor.MessageEnvelope); ok {
		return env.Message
	}
	return msg
}

// mortal is an actor that answers the user messages that reach its
// mailbox after it has stopped. protoactor drops them: a request queued
// behind a stop (a command racing a Close, a hand-over, a deletion) then
// waited out its caller's timeout, where one sent a moment later gets a
// dead letter at once.
type mortal interface {
	actor.Actor
	// stopped reports whether the actor has stopped.
	stopped() bool
	// tooLate answers a message the stopped actor will not run.
	tooLate(msg any)
}

// mortal returns the actor, a mortal, or nil.
func (m *mailbox) mortal() mortal {
	if a, ok := m.invoker.(interface{ Actor() actor.Actor }); ok {
		if d, ok := a.Actor().(mortal); ok {
			return d
		}
	}
	return nil
}

// bury hands the user messages still queued to the actor's tooLate, and
// every later one, once a system message has stopped the actor.
func (m *mailbox) bury() {
	a := m.mortal()
	if a == nil || !a.stopped() {
		return
	}
	m.mu.Lock()
	m.dead = true
	left := append(m.user.take(), m.reports.take()...)
	m.mu.Unlock()
	for _, msg := range left {
		m.users.Add(-1)
		release(msg)
		a.tooLate(msg)
	}
}

// batcher is an actor told when its mailbox has run what it held, or as
// much as it runs before it yields: the session wakes its feed's readers
// then, once for the whole batch.
type batcher interface{ batchEnd() }

// batchEnd tells the actor, if it asks to be told, that a batch ended.
func (m *mailbox) batchEnd() {
	if a, ok := m.invoker.(interface{ Actor() actor.Actor }); ok {
		if b, ok := a.Actor().(batcher); ok {
			b.batchEnd()
		}
	}
}

func (m *mailbox) run() {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			m.invoker.EscalateFailure(r, msg)
		}
	}()
	defer m.batchEnd()
	i, t := 0, m.dispatcher.Throughput()
	for {
		if i > t {
			i = 0
			m.batchEnd()
			runtime.Gosched()
		}
		i++
		var system bool
		if msg, system = m.next(); msg == nil {
			return
		}
		if !system {
			m.users.Add(-1)
			m.invoker.InvokeUserMessage(msg)
			continue
		}
		switch msg.(type) {
		case *actor.SuspendMailbox:
			m.suspended.Store(true)
		case *actor.ResumeMailbox:
			m.suspended.Store(false)
		default:
			m.invoker.InvokeSystemMessage(msg)
			m.bury()
		}
	}
}
