package approval_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tack-run/tack/plugins"
)

// TestTimeoutPastDuration: a timeout_ms past what a time.Duration holds
// waits a century, not what its nanoseconds wrap around to (18446744073710
// ms was 0.45 ms); the century keeps a held call's deadline one the store
// holds in int64 nanoseconds since 1970.
func TestTimeoutPastDuration(t *testing.T) {
	const century = 100 * 365 * 24 * time.Hour
	for _, c := range []struct {
		ms   int64
		want time.Duration
	}{
		{1, time.Millisecond},
		{120000, 2 * time.Minute},
		{int64(century / time.Millisecond), century},
		{int64(century/time.Millisecond) + 1, century},
		{9223372036854, century}, // the most a Duration holds
		{9223372036855, century},
		{18446744073710, century},
		{1e13, century},
		{1<<63 - 1, century},
	} {
		t.Run(fmt.Sprint(c.ms), func(t *testing.T) {
			got := mustNew(t, fmt.Sprintf(`{"timeout_ms": %d}`, c.ms)).Handle(shell("rm x"))
			if len(got) != 1 || got[0].Kind != plugins.HoldForApproval || got[0].Timeout != c.want {
				t.Errorf("Handle = %+v, want a hold with timeout %v", got, c.want)
			}
			deadline := time.Now().Add(got[0].Timeout)
			if deadline.Before(time.Now()) {
				t.Errorf("deadline %v is past", deadline)
			} else if time.Unix(0, deadline.UnixNano()).Compare(deadline) != 0 {
				t.Errorf("deadline %v is not one int64 nanoseconds since 1970 hold", deadline)
			}
		})
	}
}
