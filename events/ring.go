package events

import "google.golang.org/protobuf/proto"

// minRingAlloc is the first allocation of a ring that has a use for one:
// one slot, for the session_created of a session nobody has used yet,
// which is what most idle sessions keep (24 bytes, where two slots took
// 48).
const minRingAlloc = 1

// blockSlots is the size of the blocks a ring grows by once its first
// block is full: 32 entries, 768 bytes, a size class of its own. A ring
// that copied itself into an array twice its size at every fill allocated
// twice what it held, and a fresh session's ring was a fifth of what a
// scripted turn allocated (docs/benchmarks.md, finding 21).
const blockSlots = 32

// ring holds the newest events of a session, oldest first, as kept
// entries. Nothing is allocated before the first push. The first block
// doubles as it fills, from minRingAlloc up to blockSlots; past that the
// ring grows by a block of blockSlots at a time, without copying, up to
// max slots (the last block cut to fit). Only then does it wrap,
// overwriting the oldest event.
type ring struct {
	first []kept // slots 0 to len(first)-1
	// more holds the blocks after first, which is then blockSlots long;
	// nil until the ring needs one, so that a small ring costs no more
	// than its slots.
	more *[][]kept
	head int // slot of the oldest event
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
	if size := r.size(); r.n == size {
		if size == r.max {
			// Full at its maximum size: overwrite the oldest.
			*r.slot(r.head) = k
			r.head = r.wrap(r.head + 1)
			return
		}
		r.grow(size)
	}
	*r.slot(r.wrap(r.head + r.n)) = k
	r.n++
}

// grow adds room to a full ring of size slots short of its max. A full
// ring that can grow has not wrapped since it was made (resize), so its
// head is slot 0 and the new slots go at its end.
func (r *ring) grow(size int) {
	if len(r.first) < blockSlots {
		r.resize(min(max(2*len(r.first), minRingAlloc), blockSlots, r.max))
		return
	}
	if r.more == nil {
		r.more = new([][]kept)
	}
	*r.more = append(*r.more, make([]kept, min(blockSlots, r.max-size)))
}

// at returns the i-th oldest entry held, 0 ≤ i < r.n.
func (r *ring) at(i int) kept {
	return *r.slot(r.wrap(r.head + i))
}

// slot is slot i of the ring, 0 ≤ i < r.size().
func (r *ring) slot(i int) *kept {
	if i < len(r.first) {
		return &r.first[i]
	}
	i -= blockSlots
	return &(*r.more)[i/blockSlots][i%blockSlots]
}

func (r *ring) wrap(i int) int {
	if size := r.size(); i >= size {
		i -= size
	}
	return i
}

// size is the number of slots.
func (r *ring) size() int {
	if r.more == nil {
		return len(r.first)
	}
	more := *r.more
	return blockSlots*len(more) + len(more[len(more)-1])
}

// resize moves the events held into a ring of at least size slots (a
// first block of size when that is under blockSlots, whole blocks
// otherwise, so that it can grow block by block), keeping the newest when
// size < r.n.
func (r *ring) resize(size int) {
	fresh := ring{n: min(r.n, size), max: r.max}
	if size > 0 {
		fresh.first = make([]kept, min(size, blockSlots))
	}
	for fresh.size() < size {
		fresh.grow(fresh.size())
	}
	for i := range fresh.n {
		*fresh.slot(i) = r.at(r.n - fresh.n + i)
	}
	*r = fresh
}
