package liveheap

import (
	"runtime"
	"testing"
)

// TestBytesCountsWhatIsKept: a megabyte kept alive shows in Bytes, and is
// gone from it once let go.
func TestBytesCountsWhatIsKept(t *testing.T) {
	const size = 1 << 20
	before := Bytes()
	kept := make([]byte, size)
	if got := int64(Bytes()) - int64(before); got < size {
		t.Errorf("live heap grew by %d B with %d B kept", got, size)
	}
	runtime.KeepAlive(kept)
	if got := int64(Bytes()) - int64(before); got >= size {
		t.Errorf("live heap still %d B larger once the %d B were let go", got, size)
	}
}
