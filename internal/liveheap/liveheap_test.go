package liveheap

import (
	"runtime"
	"testing"
)

// TestBytesCountsWhatIsKept: a megabyte kept alive shows in Bytes, and is
// gone from it once let go. The rest of the process (the testing
// package's own goroutines) may free or allocate a few objects between
// two readings, so the megabyte is counted with a page of slack: a
// clean-clone run once read 16 B short of it.
func TestBytesCountsWhatIsKept(t *testing.T) {
	const size, slack = 1 << 20, 4 << 10
	before := Bytes()
	kept := make([]byte, size)
	if got := int64(Bytes()) - int64(before); got < size-slack {
		t.Errorf("live heap grew by %d B with %d B kept", got, size)
	}
	runtime.KeepAlive(kept)
	if got := int64(Bytes()) - int64(before); got >= size-slack {
		t.Errorf("live heap still %d B larger once the %d B were let go", got, size)
	}
}
