package metrics_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the HTTP servers of the tests leave no goroutine.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
