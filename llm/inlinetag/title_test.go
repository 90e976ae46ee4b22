package inlinetag_test

import (
	"strings"
	"testing"

	"github.com/tack-run/tack/llm/inlinetag"
)

// TestCutTitle: a title is the first line that is not blank, trimmed, cut
// at 80 runes with "…".
func TestCutTitle(t *testing.T) {
	long := strings.Repeat("é", 79) + "xyz"
	for _, tc := range []struct{ prompt, want string }{
		{"", ""},
		{" \n\t\n", ""},
		{"hello", "hello"},
		{"\n\n  Fix the build  \nthen more", "Fix the build"},
		{"line one\r\nline two", "line one"},
		{strings.Repeat("a", 80), strings.Repeat("a", 80)},
		{long, strings.Repeat("é", 79) + "x…"},
		{strings.Repeat("a", 79) + " b", strings.Repeat("a", 79) + "…"}, // no space before the ellipsis
	} {
		if got := inlinetag.CutTitle(tc.prompt); got != tc.want {
			t.Errorf("CutTitle(%q) = %q, want %q", tc.prompt, got, tc.want)
		}
	}
}
