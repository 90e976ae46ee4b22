package events

import (
	"context"
	"io"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Feed is a Sink that any number of readers share. The Stream hands it
// each event once, whatever the number of readers: it keeps the newest
// events in a ring, and each FeedReader takes them from there at its own
// pace, on its own goroutine. Where a Channel per subscriber costs the
// publisher a channel send per subscriber and event, a Feed costs it one
// store per event and, when readers wait, one wake-up for all of them.
//
// A reader that falls further behind than the ring holds is skipped ahead
// and told so, as a Channel's is: an events_lost{from, to} notice (seq 0,
// the session and the time of the event that follows), then that event.
//
// Deliver, DeferWakes, Flush, Grow, Join, Leave and Close are for the
// owner goroutine that publishes (the session actor); FeedReader's
// methods for its reader.
type Feed struct {
	ring atomic.Pointer[feedRing]
	// last is the seq of the newest event in the ring, 0 before the first.
	last   atomic.Uint64
	closed atomic.Bool

	// waiting is set by a reader about to wait on wake; the next Deliver
	// (or Close) then closes wake, waking every waiting reader at once,
	// and makes a new one.
	mu      sync.Mutex
	waiting atomic.Bool
	wake    chan struct{}
	// deferred is set by DeferWakes: Deliver leaves the waking to Flush.
	// The owner's alone.
	deferred bool

	session string // for the events_lost notices
	// joined are the readers (Join, Leave); released is the seq up to
	// which the ring's slots were emptied, every reader being past it:
	// the owner's alone.
	joined   []*FeedReader
	released uint64
}

// releaseEvery is how many events a Feed delivers between two looks at
// where its readers are, to empty the slots they all passed.
const releaseEvery = 64

// feedRing is a ring of 2^k slots; the event of seq n sits in slot
// n & mask, so a reader checks the seq of what it loads.
type feedRing struct {
	slots []atomic.Pointer[eventsv1.Event]
	mask  uint64
}

// NewFeed returns a Feed for session whose ring holds at least size
// events (a power of two, at least 1).
func NewFeed(session string, size int) *Feed {
	f := &Feed{session: session, wake: make(chan struct{})}
	f.ring.Store(newFeedRing(size))
	return f
}

func newFeedRing(size int) *feedRing {
	n := 1 << bits.Len(uint(max(size, 1)-1))
	return &feedRing{slots: make([]atomic.Pointer[eventsv1.Event], n), mask: uint64(n - 1)}
}

// Deliver puts ev in the ring and wakes the readers waiting for it (after
// DeferWakes, at the next Flush, or with every releaseEvery-th event). It
// never blocks. ev's seq must follow the last one delivered (as a
// Stream's live events do); after Close it does nothing.
func (f *Feed) Deliver(ev *eventsv1.Event) {
	if f.closed.Load() {
		return
	}
	r := f.ring.Load()
	r.slots[ev.Seq&r.mask].Store(ev)
	f.last.Store(ev.Seq)
	nth := ev.Seq%releaseEvery == 0
	if f.waiting.Load() && (!f.deferred || nth) {
		f.wakeAll()
	}
	if nth {
		f.release()
	}
}

// DeferWakes makes Deliver leave waking the readers to Flush, which the
// owner promises to call once it has delivered what it had at hand (a
// session actor, when its mailbox has run what it held). A burst of
// events then costs one wake-up, not one per event that finds a reader
// waiting; a long burst still wakes them every releaseEvery events.
func (f *Feed) DeferWakes() { f.deferred = true }

// Flush wakes the readers waiting for events delivered since the last
// wake-up.
func (f *Feed) Flush() {
	if f.waiting.Load() {
		f.wakeAll()
	}
}

// release empties the slots of the events every reader has passed, so
// that the ring keeps no more than its slowest reader still needs (as a
// Channel holds only what its reader has not taken), not the whole ring.
func (f *Feed) release() {
	upto := f.last.Load() // the seq before which every reader is
	for _, r := range f.joined {
		upto = min(upto, r.pos.Load())
	}
	ring := f.ring.Load()
	from := f.released + 1
	if size := uint64(len(ring.slots)); upto > size {
		from = max(from, upto-size)
	}
	for seq := from; seq < upto; seq++ {
		if slot := &ring.slots[seq&ring.mask]; slot.Load().GetSeq() == seq {
			slot.Store(nil)
		}
	}
	f.released = max(f.released, upto-1)
}

// wakeAll wakes every reader waiting now.
func (f *Feed) wakeAll() {
	f.mu.Lock()
	f.waiting.Store(false)
	close(f.wake)
	f.wake = make(chan struct{})
	f.mu.Unlock()
}

// Grow makes the ring hold at least size events, keeping those it holds.
func (f *Feed) Grow(size int) {
	old := f.ring.Load()
	if size <= len(old.slots) {
		return
	}
	r := newFeedRing(size)
	for i := range old.slots {
		if ev := old.slots[i].Load(); ev != nil {
			r.slots[ev.Seq&r.mask].Store(ev)
		}
	}
	f.ring.Store(r)
}

// Join attaches r, made by NewFeedReader: it reads replay first, then
// the events of the feed from seq from on. The Stream's owner makes both
// at once (Stream.Replay and LastSeq()+1), so the reader misses nothing
// between them and gets nothing twice. A replay longer than the reader's
// buffer is cut to it, as a Channel's would be: the reader then reads on
// from the first event cut, told what it lost of what the feed no longer
// holds, or holds beyond the reader's buffer.
func (f *Feed) Join(r *FeedReader, replay []*eventsv1.Event, from uint64) {
	if r.buffer > 0 && len(replay) > r.buffer {
		from, replay = replay[r.buffer].Seq, replay[:r.buffer]
	}
	r.feed, r.replay, r.next = f, replay, from
	r.pos.Store(from)
	f.joined = append(f.joined, r)
}

// Leave detaches r and reports whether f has no reader left. A reader of
// another feed (the session's earlier one) changes nothing.
func (f *Feed) Leave(r *FeedReader) (empty bool) {
	if i := slices.Index(f.joined, r); i >= 0 {
		f.joined = slices.Delete(f.joined, i, i+1)
	}
	return len(f.joined) == 0
}

// Close ends the feed: its readers read what the ring still holds for
// them, then io.EOF.
func (f *Feed) Close() {
	if f.closed.CompareAndSwap(false, true) {
		f.wakeAll()
	}
}

// FeedReader reads a Feed. One goroutine reads it at a time.
type FeedReader struct {
	feed   *Feed
	filter Filter
	buffer int
	replay []*eventsv1.Event
	// next is the seq of the next event it takes from the feed, and pos
	// what the feed's owner sees of it; held is the event that follows
	// an events_lost notice it returned.
	next uint64
	pos  atomic.Uint64
	held *eventsv1.Event
	// closed is set by Close.
	closed atomic.Bool
}

// NewFeedReader returns a reader of the feed's events that match f, to
// give to Feed.Join. It may fall buffer events behind (0: as far as the
// ring holds) before it is told it lost some; its replay takes at most
// buffer events.
func NewFeedReader(f Filter, buffer int) *FeedReader {
	return &FeedReader{filter: f, buffer: buffer}
}

// Filter is the filter the reader was made with, for its replay.
func (r *FeedReader) Filter() Filter { return r.filter }

// Next returns the next event: the replay, then the feed's events that
// match the reader's filter, waiting for one until ctx ends. It returns
// io.EOF once the reader is closed, or the feed is and the reader has
// read what it held.
func (r *FeedReader) Next(ctx context.Context) (*eventsv1.Event, error) {
	for {
		if ev, err := r.TryNext(); ev != nil || err != nil {
			return ev, err
		}
		f := r.feed
		f.mu.Lock()
		f.waiting.Store(true)
		wake := f.wake
		f.mu.Unlock()
		// What was delivered, or closed, before waiting was set is seen
		// here; what comes after closes wake.
		if f.last.Load() >= r.next || r.closed.Load() || f.closed.Load() {
			continue
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// TryNext is Next without the wait: nil and no error when no event is
// there yet.
func (r *FeedReader) TryNext() (*eventsv1.Event, error) {
	if r.closed.Load() {
		return nil, io.EOF
	}
	// Read before take: a feed seen closed has had its last Deliver.
	ended := r.feed.closed.Load()
	if ev := r.take(); ev != nil {
		return ev, nil
	}
	if ended {
		return nil, io.EOF
	}
	return nil, nil
}

// take returns the next event there is, nil when there is none yet.
func (r *FeedReader) take() *eventsv1.Event {
	defer func() { r.pos.Store(r.next) }()
	if len(r.replay) > 0 {
		ev := r.replay[0]
		r.replay[0], r.replay = nil, r.replay[1:]
		return ev
	}
	if ev := r.held; ev != nil {
		r.held = nil
		return ev
	}
	f := r.feed
	for last := f.last.Load(); last >= r.next; last = f.last.Load() {
		if r.buffer > 0 && last-r.next >= uint64(r.buffer) {
			// More than its buffer behind, whatever the ring holds for
			// readers with larger ones.
			return r.skip()
		}
		ring := f.ring.Load()
		ev := ring.slots[r.next&ring.mask].Load()
		if ev == nil || ev.Seq != r.next {
			// Overwritten: start again at the oldest event held.
			return r.skip()
		}
		r.next++
		if r.filter.Match(ev) {
			return ev
		}
	}
	return nil
}

// skip moves the reader, which fell further behind than the ring holds
// or than its buffer, past the events it lost to the oldest one it may
// still read, keeps that one, and returns the events_lost notice for
// what it passed over.
func (r *FeedReader) skip() *eventsv1.Event {
	f, from := r.feed, r.next
	for {
		last, ring := f.last.Load(), f.ring.Load()
		seq := from + 1
		if size := uint64(len(ring.slots)); last >= size {
			seq = max(seq, last-size+1)
		}
		if b := uint64(r.buffer); b > 0 && last >= b {
			seq = max(seq, last-b+1)
		}
		// After Grow the oldest slots may hold nothing yet: the first
		// event found from there on is the oldest held.
		for ; seq <= last; seq++ {
			ev := ring.slots[seq&ring.mask].Load()
			if ev == nil || ev.Seq != seq {
				continue
			}
			r.next = seq + 1
			if r.filter.Match(ev) {
				r.held = ev
			}
			return newEventsLost(f.session, from, seq-1, ev.TsUnixNano)
		}
	}
}

// Ended reports whether the reader's feed ended (Feed.Close): its owner
// needs no Leave.
func (r *FeedReader) Ended() bool { return r.feed != nil && r.feed.closed.Load() }

// Close ends the reader: Next returns io.EOF from then on, at once if it
// is waiting. The feed's owner must still be told (Feed.Leave).
func (r *FeedReader) Close() {
	if r.closed.CompareAndSwap(false, true) && r.feed != nil {
		r.feed.wakeAll()
	}
}
