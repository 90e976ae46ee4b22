// Package journal is a session's write gate as a plain value. It keeps
// one rule: durable before visible. A change the store must keep (Touch)
// closes the gate; from then on what the session tells — events and
// answers (Add) — waits in the journal until the write that holds the
// change has landed (Landed). The session actor asks it whether to start
// a write (Start), starts it off the actor, and tells what the journal
// hands back; the journal does no I/O and knows nothing of the store.
//
// A write that fails is tried again after writeRetries (Failed); one that
// fails for good takes the session down (Down): what waited is never told,
// and while down, a command that would need a write waits (Hold) for one
// try at the store (a probe): if it lands the session is up again and the
// commands held go through, if not they are refused.
package journal

import (
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Item is an event or an answer waiting for a write.
type Item struct {
	Event *eventsv1.Event
	// To is who waits for Reply.
	To    *actor.PID
	Reply *eventsv1.Reply
	// Read is the command Reply answers when that command only reads
	// (get_state, get_messages, a listing's entry): if the write fails for good, the session
	// answers it again from what it went back to, instead of refusing it.
	Read any
}

// Held is a command that waits, while the session is down, for the try
// that tells whether the store is back.
type Held struct {
	Msg    any
	Sender *actor.PID
}

// Retries are the waits before the tries after a failed write: a dropped
// connection usually comes back; the gate stays shut meanwhile.
var Retries = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, 800 * time.Millisecond}

// Journal is a session's write gate. The zero value is open, with
// nothing waiting.
type Journal struct {
	gate       bool // changes await a write: hold events and answers
	inflight   bool // a write is under way
	retrying   bool // the write under way failed and waits for its retry
	dirtyAfter bool // changes since the write in flight started
	probe      bool // a try at the store is asked for, holding nothing
	failures   int  // writes failed in a row
	outbox     []Item
	upTo       int // outbox items the write in flight releases
	down       error
	held       []Held
}

// Touch marks a change the store must keep before anyone hears of it.
func (j *Journal) Touch() {
	j.gate = true
	if j.inflight {
		j.dirtyAfter = true
	}
}

// Add queues an event or an answer behind what waits.
func (j *Journal) Add(it Item) { j.outbox = append(j.outbox, it) }

// Start reports whether a write is to start now — changes wait, a try
// at the store is asked for, or due (the session's own reason: an event
// sequence far past the stored one) — and none is under way; a write it
// starts releases what waits now. A try asked for while down holds
// nothing back.
func (j *Journal) Start(due bool) bool {
	if j.inflight {
		return false
	}
	probe := j.probe
	j.probe = false
	if !j.gate && !probe && !(due && j.down == nil) {
		return false
	}
	if !probe {
		j.gate = true
	}
	j.inflight, j.upTo, j.dirtyAfter = true, len(j.outbox), false
	return true
}

// Open tells what may be told now the handling of a message is done:
// all that waits, unless the gate is shut.
func (j *Journal) Open(tell func(Item)) {
	if !j.gate {
		j.release(len(j.outbox), tell)
	}
}

// Failed takes a write that failed with a reason it may be tried again
// for (not while down, and never for a lease another node holds): it
// returns the wait before the retry, no other write starting meanwhile,
// or false once the retries are spent — then call Down.
func (j *Journal) Failed(retryable bool) (time.Duration, bool) {
	j.inflight = false
	if !retryable || j.down != nil || j.failures >= len(Retries) {
		return 0, false
	}
	j.inflight, j.retrying = true, true // no other write until the retry
	d := Retries[j.failures]
	j.failures++
	return d, true
}

// Retry is the retry's time: the next Start writes whatever changed since.
func (j *Journal) Retry() {
	j.inflight, j.retrying = false, false
	j.gate = true
}

// Landed takes a write that landed: when the session was down, it
// hands the commands held for it to resend, now to go through; then it
// tells what the write made safe to tell (everything, and the gate
// opens, unless changes came meanwhile).
func (j *Journal) Landed(resend func([]Held), tell func(Item)) {
	j.inflight, j.failures = false, 0
	if j.down != nil {
		j.down = nil
		held := j.held
		j.held = nil
		resend(held)
	}
	n := j.upTo
	if !j.dirtyAfter {
		n, j.gate = len(j.outbox), false
	}
	j.release(n, tell)
}

// Down takes the session down after a write that failed for good, with
// err: it returns what waited for writes — never to be told — and the
// commands held, to be refused; first reports whether the session was up.
func (j *Journal) Down(err error) (dropped []Item, refused []Held, first bool) {
	first = j.down == nil
	j.down, j.failures = err, 0
	j.gate, j.dirtyAfter = false, false
	dropped, j.outbox = j.outbox, nil
	refused, j.held = j.held, nil
	return dropped, refused, first
}

// Err is the error of the write that failed for good; nil while the
// store takes the session's writes.
func (j *Journal) Err() error { return j.down }

// Hold keeps a command that would need a write while the session is down
// and asks for a try at the store; it reports whether it held it (false:
// the session is up).
func (j *Journal) Hold(h Held) bool {
	if j.down == nil {
		return false
	}
	j.held = append(j.held, h)
	j.probe = true
	return true
}

// Told reports whether everything the session changed is stored and
// told: no write under way or wanted, nothing waiting to be told. (A
// session down holds what the store holds, and nothing waits.)
func (j *Journal) Told() bool { return !j.inflight && !j.gate && len(j.outbox) == 0 }

// Holding reports whether commands are held while the session is down.
func (j *Journal) Holding() bool { return len(j.held) > 0 }

// Settled reports whether nothing waits: no write under way or wanted, no
// item, no held command, the session up.
func (j *Journal) Settled() bool {
	return !j.inflight && !j.gate && j.down == nil && len(j.outbox) == 0 && len(j.held) == 0
}

// Waiting is what waits to be told, in order, for reading (the next
// write's event sequence counts its events).
func (j *Journal) Waiting() []Item { return j.outbox }

// Drop empties the journal, returning what waited to be told and the
// commands held while down: the session stops.
func (j *Journal) Drop() ([]Item, []Held) {
	out, held := j.outbox, j.held
	j.outbox, j.held = nil, nil
	return out, held
}

// Writing reports whether a write is running now: started and not yet
// landed or failed (not a failed one waiting for its retry).
func (j *Journal) Writing() bool { return j.inflight && !j.retrying }

// release tells the first n items, in order, and takes them out; the
// outbox keeps its room for the next message's items when it is emptied.
func (j *Journal) release(n int, tell func(Item)) {
	if n == 0 {
		return
	}
	items := j.outbox[:n]
	for _, it := range items {
		tell(it)
	}
	if n < len(j.outbox) {
		j.outbox = slices.Clone(j.outbox[n:])
		return
	}
	clear(items)
	j.outbox = j.outbox[:0]
}
