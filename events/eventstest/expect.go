package eventstest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Types returns the wire names of evs, in order.
func Types(evs []*eventsv1.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = events.Type(ev)
	}
	return out
}

// ExpectTypes checks that the types of got are exactly want, in order, and
// otherwise fails t (without stopping it) with a line diff: "-" for an
// expected type missing from got, "+" for an unexpected one. It reports
// whether they matched.
func ExpectTypes(t testing.TB, got []*eventsv1.Event, want ...string) bool {
	t.Helper()
	g := Types(got)
	if slices.Equal(g, want) {
		return true
	}
	t.Errorf("event types differ (-want +got):\n%s", diff(want, g))
	return false
}

// diff returns a line diff turning want into got: unchanged lines start
// with two spaces, lines only in want with "- ", lines only in got with
// "+ ". It is a longest-common-subsequence diff, meant for the short
// sequences of a test.
func diff(want, got []string) string {
	// lcs[i][j] is the LCS length of want[i:] and got[j:].
	lcs := make([][]int, len(want)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(got)+1)
	}
	for i := len(want) - 1; i >= 0; i-- {
		for j := len(got) - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case i < len(want) && j < len(got) && want[i] == got[j]:
			fmt.Fprintf(&b, "  %s\n", want[i])
			i, j = i+1, j+1
		case i < len(want) && (j == len(got) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&b, "- %s\n", want[i])
			i++
		default:
			fmt.Fprintf(&b, "+ %s\n", got[j])
			j++
		}
	}
	return b.String()
}
