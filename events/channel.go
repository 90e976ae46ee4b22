package events

import (
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Channel is a Sink that hands events to a reader goroutine through a Go
// channel without ever blocking the publisher.
//
// Deliver never waits. When an event does not fit, the Channel drops it and
// every following one until the reader has made room for two, then sends
// an events_lost{from, to} notice for the dropped range (seq 0, the
// session and the time of the event that follows it), then that event, and
// continues live. The reader can fill the gap by subscribing again with
// since = from-1. One slot of the Go channel is kept in reserve for that
// notice, so a Channel of buffer n holds n events plus the notice.
//
// Deliver and Close are for the owner goroutine that publishes (the
// session actor); only it sends on or closes C. The reader only receives.
type Channel struct {
	c      chan *eventsv1.Event
	buffer int
	lossy  bool
	from   uint64 // first lost seq while lossy
	to     uint64 // last lost seq while lossy
	closed bool
	// done is closed with c, for a goroutine other than the reader to
	// wait for the end without taking the events still buffered.
	done chan struct{}
}

// NewChannel returns a Channel that buffers up to buffer events (at least
// 1) for a reader that falls behind.
func NewChannel(buffer int) *Channel {
	buffer = max(buffer, 1)
	return &Channel{c: make(chan *eventsv1.Event, buffer+1), buffer: buffer, done: make(chan struct{})}
}

// C returns the channel the reader receives from. It is closed by Close.
func (c *Channel) C() <-chan *eventsv1.Event { return c.c }

// Done returns a channel closed together with C: waiting on it takes
// nothing from C.
func (c *Channel) Done() <-chan struct{} { return c.done }

// Deliver sends ev to the reader if there is room, and otherwise records
// it as lost (see Channel). It never blocks. After Close it does nothing.
func (c *Channel) Deliver(ev *eventsv1.Event) {
	if c.closed {
		return
	}
	// Only this goroutine sends, so the room counted here can only grow
	// before the sends below.
	if len(c.c) >= c.buffer {
		c.drop(ev)
		return
	}
	if c.lossy {
		notice := newEventsLost(ev.GetSession(), c.from, c.to, ev.GetTsUnixNano())
		if !c.trySend(notice) {
			c.drop(ev)
			return
		}
		c.lossy = false
	}
	if !c.trySend(ev) {
		c.drop(ev)
	}
}

func (c *Channel) trySend(ev *eventsv1.Event) bool {
	select {
	case c.c <- ev:
		return true
	default:
		return false
	}
}

// drop records ev as lost. A dropped events_lost notice (from a replay)
// widens the lost range by the range it reported.
func (c *Channel) drop(ev *eventsv1.Event) {
	from, to := ev.GetSeq(), ev.GetSeq()
	if lost := ev.GetEventsLost(); lost != nil && ev.GetSeq() == 0 {
		from, to = lost.GetFrom(), lost.GetTo()
	}
	if !c.lossy {
		c.lossy, c.from, c.to = true, from, to
		return
	}
	c.from, c.to = min(c.from, from), max(c.to, to)
}

// Close closes C, after which the reader sees the channel end. It is for
// the owner goroutine, once the subscription is over (after Unsubscribe);
// closing twice does nothing.
func (c *Channel) Close() {
	if !c.closed {
		c.closed = true
		close(c.c)
		close(c.done)
	}
}
