// Package delayline runs functions a fixed delay after they were started,
// on one timer for all of them.
//
// A session sets two timers whose delay its runtime fixes: passivation
// (Settings.PassivateAfter) and the idle trim of its event buffer
// (Settings.IdleTrim). With time.AfterFunc each pending one is a runtime
// timer of its own, and each that fires starts a goroutine: 100,000
// sessions that went quiet together passivated on as many goroutines at
// once, whose descriptors the Go runtime keeps for good. Because the
// delay is the same for every entry of a Line, the order in which entries
// are started is the order in which they fall due: a Line keeps them in a
// list, started at its tail and run from its head, with one timer armed
// for the head. Starting, restarting and stopping an entry are O(1).
//
// A Line runs the functions that fall due one after the other on the
// goroutine of its timer, yielding after each, so they must not block: the
// sessions' only post a message to their own mailbox. Yielding paces a
// storm: when 100,000 sessions that were created together fall due
// together, each post's mailbox runs on a worker that the one before left
// idle, where a goroutine per post kept the peak of goroutines, whose
// descriptors the Go runtime never frees, in the thousands.
package delayline

import (
	"runtime"
	"sync"
	"time"
)

// Line runs each started Entry's function its delay after the start. The
// zero Line is not usable; make one with New. A Line is safe for
// concurrent use.
type Line struct {
	delay time.Duration
	epoch time.Time // due times are nanoseconds since epoch (monotonic)

	mu    sync.Mutex
	root  Entry // root.next is the oldest entry, root.prev the newest
	timer *time.Timer
	// armed: the timer is pending or its function is running; either
	// way the head will be looked at again.
	armed bool
}

// Entry is a function a Line runs, with the argument of its last Start.
// An entry is started at most once at a time: a Start while it is
// pending moves it to the tail, with the new argument.
type Entry struct {
	prev, next *Entry
	line       *Line
	due        int64
	arg        uint64
	fn         func(arg uint64)
}

// New returns a Line whose entries run delay after they are started.
func New(delay time.Duration) *Line {
	l := &Line{delay: delay, epoch: time.Now()}
	l.root.prev, l.root.next = &l.root, &l.root
	return l
}

// Delay is the line's delay.
func (l *Line) Delay() time.Duration { return l.delay }

// Entry returns a stopped entry of l that calls fn with the argument of
// its last Start.
func (l *Line) Entry(fn func(arg uint64)) *Entry { return &Entry{line: l, fn: fn} }

// Start (re)starts e: its function runs with arg once the line's delay
// has passed, unless e is stopped or started again before.
func (e *Entry) Start(arg uint64) {
	l := e.line
	l.mu.Lock()
	defer l.mu.Unlock()
	e.unlink()
	e.arg, e.due = arg, int64(time.Since(l.epoch)+l.delay)
	e.prev, e.next = l.root.prev, &l.root
	e.prev.next, l.root.prev = e, e
	if !l.armed {
		l.armed = true
		l.arm(l.delay)
	}
}

// Stop keeps e from running; it reports whether e was pending. A function
// the line has already taken up may still run.
func (e *Entry) Stop() bool {
	l := e.line
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.next == nil {
		return false
	}
	e.unlink()
	if l.root.next == &l.root && l.armed && l.timer.Stop() {
		l.armed = false
	}
	return true
}

// unlink takes e out of its line's list, if it is in it. l.mu is held.
func (e *Entry) unlink() {
	if e.next == nil {
		return
	}
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

// arm sets the timer to fire after d. l.mu is held.
func (l *Line) arm(d time.Duration) {
	if l.timer == nil {
		l.timer = time.AfterFunc(d, l.fire)
		return
	}
	l.timer.Reset(d)
}

// fire runs the entries that are due, oldest first, each outside the
// lock (a function may start or stop entries), then arms the timer for
// the next one, or leaves the line unarmed once it is empty.
func (l *Line) fire() {
	l.mu.Lock()
	for {
		head := l.root.next
		if head == &l.root {
			l.armed = false
			break
		}
		if wait := time.Duration(head.due) - time.Since(l.epoch); wait > 0 {
			l.arm(wait)
			break
		}
		head.unlink()
		fn, arg := head.fn, head.arg
		l.mu.Unlock()
		fn(arg)
		// Let what fn handed off run before handing off more: a mailbox
		// that fn scheduled then takes a worker that is idle again for
		// the next entry, where a storm of entries due at once would
		// start a goroutine for each (TestDueStormReusesWorkers).
		runtime.Gosched()
		l.mu.Lock()
	}
	l.mu.Unlock()
}
