package events

import eventsv1 "github.com/tack-run/tack/events/v1"

// minRingAlloc is the first allocation of a ring that has a use for one.
const minRingAlloc = 2

// ring holds the newest events of a session, oldest first. Its backing
// array is allocated on the first push and doubles as it fills, up to max
// slots; only then does it wrap, overwriting the oldest event.
type ring struct {
	buf  []*eventsv1.Event
	head int // index in buf of the oldest event
	n    int // number of events held
	max  int
}

func (r *ring) push(ev *eventsv1.Event) {
	if r.max <= 0 {
		return
	}
	if r.n == len(r.buf) {
		if len(r.buf) < r.max {
			r.resize(min(max(2*len(r.buf), minRingAlloc), r.max))
		} else {
			// Full at its maximum size: overwrite the oldest.
			r.buf[r.head] = ev
			r.head = r.wrap(r.head + 1)
			return
		}
	}
	r.buf[r.wrap(r.head+r.n)] = ev
	r.n++
}

// at returns the i-th oldest event held, 0 ≤ i < r.n.
func (r *ring) at(i int) *eventsv1.Event {
	return r.buf[r.wrap(r.head+i)]
}

func (r *ring) wrap(i int) int {
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	return i
}

// resize moves the events held into a new array of size slots, keeping
// the newest when size < r.n.
func (r *ring) resize(size int) {
	var buf []*eventsv1.Event
	if size > 0 {
		buf = make([]*eventsv1.Event, size)
	}
	keep := min(r.n, size)
	for i := range keep {
		buf[i] = r.at(r.n - keep + i)
	}
	r.buf, r.head, r.n = buf, 0, keep
}
