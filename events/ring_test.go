package events

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestRingModel pushes and trims rings of many sizes at random and
// checks each against a plain slice of the newest events.
func TestRingModel(t *testing.T) {
	for _, max := range []int{0, 1, 2, 3, 10, 31, 32, 33, 40, 64, 65, 100, 1024} {
		rnd := rand.New(rand.NewPCG(uint64(max), 7))
		r := ring{max: max}
		var model []int64
		for step := range 5000 {
			if rnd.IntN(200) == 0 {
				keep := rnd.IntN(r.n + 2)
				r.resize(min(keep, r.n))
				model = model[len(model)-min(keep, len(model)):]
			} else {
				r.push(kept{ts: int64(step)})
				if max > 0 {
					model = append(model, int64(step))
					model = model[len(model)-min(len(model), max):]
				}
			}
			if r.n != len(model) || r.size() < r.n || r.size() > max {
				t.Fatalf("max %d, step %d: %d held in %d slots, want %d", max, step, r.n, r.size(), len(model))
			}
			for i, want := range model {
				if got := r.at(i).ts; got != want {
					t.Fatalf("max %d, step %d: entry %d is %d, want %d", max, step, i, got, want)
				}
			}
		}
	}
}

// TestRingGrowsByBlocks: past its first block a ring allocates a block at
// a time and copies nothing; before, it doubles.
func TestRingGrowsByBlocks(t *testing.T) {
	r := ring{max: 1024}
	for i := range 200 {
		r.push(kept{ts: int64(i)})
	}
	if len(r.first) != blockSlots || r.more == nil || len(*r.more) != 6 || r.size() != 224 {
		t.Fatalf("200 events in a first block of %d and %d slots in all, want %d and 224", len(r.first), r.size(), blockSlots)
	}
	allocs := testing.AllocsPerRun(10, func() {
		r := ring{max: 1024}
		for i := range 1024 {
			r.push(kept{ts: int64(i)})
		}
	})
	// 1, 2, 4, 8, 16 and 32 slots; the list of blocks, and its array
	// as it grows (6 arrays); 31 blocks. Doubling to 1,024 made 11
	// arrays, but of 2,047 slots where these are 1,024.
	if allocs > 6+7+31 {
		t.Errorf("a ring of 1,024 allocated %v times", allocs)
	}
}

// TestStreamSizeClass keeps a session's Stream within the 128-byte size
// class: every live session has one.
func TestStreamSizeClass(t *testing.T) {
	if got := unsafe.Sizeof(Stream{}); got > 128 {
		t.Errorf("Stream is %d bytes, over the 128-byte size class", got)
	}
}
