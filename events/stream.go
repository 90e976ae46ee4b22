package events

import (
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// DefaultRingSize is the number of events a Stream keeps for replay unless
// WithRingSize says otherwise.
const DefaultRingSize = 1024

// Sink receives the events of a subscription.
//
// Deliver is called on the Stream owner's goroutine and must never block
// it: a sink that cannot keep up drops events and reports the gap (as
// Channel does). The event is shared with every other subscriber, and its
// payload with the ring buffer, so a sink must treat it as read-only.
// Deliver must not call back into the Stream. Sinks are compared by
// identity (Unsubscribe), so a Sink must be a comparable type, normally a
// pointer.
type Sink interface {
	Deliver(ev *eventsv1.Event)
}

// Stream is the event stream of one session: it numbers events, keeps the
// newest of them in a ring buffer for replay, and delivers them to
// subscribers.
//
// A Stream is owned by one goroutine (the session actor) and is not safe
// for concurrent use; it has no locks. Because the owner both publishes and
// subscribes, a subscriber gets the replay and then the live events with no
// gap and no duplicate.
type Stream struct {
	session string
	clock   func() time.Time
	ring    ring
	seq     uint64
	subs    []subscription
	tap     Sink
}

type subscription struct {
	sink   Sink
	filter Filter
	// sent is the seq of the last event the sink was given.
	sent uint64
}

// StreamOption configures a Stream.
type StreamOption func(*Stream)

// WithRingSize sets how many events the Stream keeps for replay (default
// DefaultRingSize). The memory is allocated as events arrive, doubling up
// to 32 slots and then 32 at a time, up to n slots. n ≤ 0 keeps none:
// every replay then reports events_lost.
func WithRingSize(n int) StreamOption {
	return func(s *Stream) { s.ring.max = max(n, 0) }
}

// WithClock sets the clock that stamps events (default time.Now).
func WithClock(now func() time.Time) StreamOption {
	return func(s *Stream) {
		if now != nil {
			s.clock = now
		}
	}
}

// WithLastSeq makes the Stream continue a sequence that already reached
// seq, for a session restored from storage (on restart or on another
// node): the next event gets seq+1, and replays from before it report
// events_lost.
func WithLastSeq(seq uint64) StreamOption {
	return func(s *Stream) { s.seq = seq }
}

// WithTap hands every published event to tap as well, before the
// subscribers (one that saw an event finds the tap told of it), under the
// same rules as a Sink (it runs on the owner's goroutine and must never
// block). A tap is not a subscription: it gets no replay, has no filter,
// is not counted by Subscribers and cannot be unsubscribed. Tracing uses
// it to watch a session for its whole life.
// A nil tap does nothing.
func WithTap(tap Sink) StreamOption {
	return func(s *Stream) { s.tap = tap }
}

// NewStream returns the event stream of session. It allocates nothing more
// until the first event is published.
func NewStream(session string, opts ...StreamOption) *Stream {
	s := &Stream{session: session, clock: time.Now, ring: ring{max: DefaultRingSize}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Session returns the session id that Publish stamps on events.
func (s *Stream) Session() string { return s.session }

// LastSeq returns the seq of the last published event, 0 before the first.
func (s *Stream) LastSeq() uint64 { return s.seq }

// Len returns the number of events held for replay.
func (s *Stream) Len() int { return s.ring.n }

// Subscribers returns the number of current subscriptions.
func (s *Stream) Subscribers() int { return len(s.subs) }

// Publish stamps ev with the session, the next seq (1, 2, 3, ... with no
// gaps) and, unless it carries a time already, the current time (a
// session stamps the events of one message with one reading of the
// clock); it keeps its payload and time in the ring
// buffer (dropping the oldest when full) and delivers it to every
// subscriber whose filter matches. ev must carry a payload (see New); from
// then on it and its payload are shared and must not be modified.
func (s *Stream) Publish(ev *eventsv1.Event) {
	if ev.GetPayload() == nil {
		panic("events: Publish of an event without payload")
	}
	s.seq++
	ev.Session = s.session
	ev.Seq = s.seq
	if ev.TsUnixNano == 0 {
		ev.TsUnixNano = s.clock().UnixNano()
	}
	s.ring.push(kept{payload: payloadOf(ev), ts: ev.TsUnixNano})
	if s.tap != nil {
		s.tap.Deliver(ev)
	}
	for i := range s.subs {
		if sub := &s.subs[i]; sub.filter.Match(ev) {
			sub.sent = ev.Seq
			sub.sink.Deliver(ev)
		}
	}
}

// Emit publishes New(payload) and returns the published event.
func (s *Stream) Emit(payload proto.Message) *eventsv1.Event {
	ev := New(payload)
	s.Publish(ev)
	return ev
}

// Replay returns the buffered events with seq > since that match f, oldest
// first. When the buffer no longer holds since+1 (and since < LastSeq), the
// result starts with an events_lost{from: since+1, to: oldest buffered - 1}
// notice. Such a notice is addressed to one subscriber, not part of the
// session's sequence: it carries the session, seq 0 and the current time.
// Each replayed Event is made anew around the payload the ring kept, equal
// to the one published; the payloads are shared: treat them as read-only.
func (s *Stream) Replay(since uint64, f Filter) []*eventsv1.Event {
	var out []*eventsv1.Event
	s.replay(since, f, func(ev *eventsv1.Event) { out = append(out, ev) })
	return out
}

func (s *Stream) replay(since uint64, f Filter, yield func(*eventsv1.Event)) {
	if since >= s.seq {
		return
	}
	oldest := s.seq - uint64(s.ring.n) + 1 // seq of the oldest held event
	start := 0
	if since+1 < oldest {
		yield(newEventsLost(s.session, since+1, oldest-1, s.clock().UnixNano()))
	} else {
		start = int(since + 1 - oldest)
	}
	for i := start; i < s.ring.n; i++ {
		k := s.ring.at(i)
		ev := New(k.payload)
		ev.Session, ev.Seq, ev.TsUnixNano = s.session, oldest+uint64(i), k.ts
		if f.Match(ev) {
			yield(ev)
		}
	}
}

// Subscribe delivers Replay(since, f) to sink, then every later event that
// matches f until Unsubscribe. since = LastSeq() subscribes to live events
// only; since = 0 asks for everything still buffered. Subscribing a sink
// that is already subscribed replaces its filter and replays only past
// the last event it was given, so it never gets an event twice nor one
// out of order: what it missed under its old filter since then, matching
// the new one.
func (s *Stream) Subscribe(sink Sink, since uint64, f Filter) {
	i := slices.IndexFunc(s.subs, func(sub subscription) bool { return sub.sink == sink })
	if i < 0 {
		i = len(s.subs)
		s.subs = append(s.subs, subscription{sink: sink})
	}
	sub := &s.subs[i]
	sub.filter = f
	s.replay(max(since, sub.sent), f, func(ev *eventsv1.Event) {
		sub.sent = max(sub.sent, ev.Seq)
		sink.Deliver(ev)
	})
}

// Unsubscribe ends the subscription of sink and reports whether it had
// one. It does not close the sink.
func (s *Stream) Unsubscribe(sink Sink) bool {
	for i := range s.subs {
		if s.subs[i].sink == sink {
			last := len(s.subs) - 1
			copy(s.subs[i:], s.subs[i+1:])
			s.subs[last] = subscription{}
			s.subs = s.subs[:last]
			if len(s.subs) == 0 {
				s.subs = nil
			}
			return true
		}
	}
	return false
}

// Trim keeps at most the newest keep events for replay and releases the
// memory of the rest, so an idle session can shrink to a few hundred
// bytes; later events grow the buffer again. Replays reaching further back
// then start with events_lost.
func (s *Stream) Trim(keep int) {
	s.ring.resize(min(max(keep, 0), s.ring.n))
}
