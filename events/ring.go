package events

import "google.golang.org/protobuf/proto"

// minRingAlloc is the first allocation of a ring that has a use for one.
const minRingAlloc = 2

// ring holds the newest events of a session, oldest first, as kept
// entries. Its backing array is allocated on the first push and doubles as
// it fills, up to max slots; only then does it wrap, overwriting the
// oldest event.
type ring struct {
	buf  []kept
	head int // index in buf of the oldest event
	n    int // number of events held
	max  int
}

// kept is what the ring keeps of an event: its payload and its time. Its
// session and seq follow from the Stream's and from the entry's place, so
// a replay makes the Event around them again (Stream.replay). The Event
// and its oneof wrapper, one allocation of 96 bytes, are left to the
// collector once the subscribers have them: kept costs 24 bytes where a
// pointer to the Event cost 8 and held the 96 (docs/benchmarks.md,
// finding 18).
type kept struct {
	payload proto.Message
	ts      int64
}

func (r *ring) push(k kept) {
	if r.max <= 0 {
		return
	}
	if r.n == len(r.buf) {
		if len(r.buf) < r.max {
			r.resize(min(max(2*len(r.buf), minRingAlloc), r.max))
		} else {
			// Full at its maximum size: overwrite the oldest.
			r.buf[r.head] = k
			r.head = r.wrap(r.head + 1)
			return
		}
	}
	r.buf[r.wrap(r.head+r.n)] = k
	r.n++
}

// at returns the i-th oldest entry held, 0 ≤ i < r.n.
func (r *ring) at(i int) kept {
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
	var buf []kept
	if size > 0 {
		buf = make([]kept, size)
	}
	keep := min(r.n, size)
	for i := range keep {
		buf[i] = r.at(r.n - keep + i)
	}
	r.buf, r.head, r.n = buf, 0, keep
}
