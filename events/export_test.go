package events

// FeedHeld counts the events a Feed's ring holds.
func FeedHeld(f *Feed) int {
	n := 0
	ring := f.ring.Load()
	for i := range ring.slots {
		if ring.slots[i].Load() != nil {
			n++
		}
	}
	return n
}
