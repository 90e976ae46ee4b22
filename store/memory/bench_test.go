package memory_test

import (
	"testing"

	"github.com/tack-run/tack/store/storetest"
)

func BenchmarkStore(b *testing.B) { storetest.Bench(b, newStore) }
