package inlinetag_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

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

// TestCutTitleLeavesOutWhatATitleCannotShow: NUL and the other control
// characters, bytes that are not UTF-8 and the bidirectional overrides
// are left out of a title (a tab becomes a space); every line break ends
// the line. A store refuses a title with NUL or invalid UTF-8, and a
// session whose title it refuses can write nothing more.
func TestCutTitleLeavesOutWhatATitleCannotShow(t *testing.T) {
	for _, tc := range []struct{ prompt, want string }{
		{"a\x00b", "ab"},
		{"\x00\x00\nsecond", "second"}, // a line of nothing a title shows is blank
		{"a\xffb\xc3", "ab"},
		{"a\tb", "a b"},
		{"\x1b]52;c;AAAA\x07title", "]52;c;AAAAtitle"},
		{"a\x7fb\u0085c", "ab"},
		{"a\u009bb", "ab"},
		{"a\u202eb\u2066c\u2069d\u202ae", "abcde"},
		{"one\rtwo", "one"},
		{"one\u2028two", "one"},
		{"one\vtwo\ftree", "one"},
		{"\u200dé\u00a0x", "\u200dé\u00a0x"}, // joiners and other spaces stay
		{strings.Repeat("\x00a", 100), strings.Repeat("a", 80) + "…"},
		{strings.Repeat("a", 80) + "   \n", strings.Repeat("a", 80)},
		{strings.Repeat("a", 80) + "  \x00 b", strings.Repeat("a", 80) + "…"},
	} {
		if got := inlinetag.CutTitle(tc.prompt); got != tc.want {
			t.Errorf("CutTitle(%q) = %q, want %q", tc.prompt, got, tc.want)
		}
	}
}

// FuzzCutTitle: whatever the text, its title is one line of UTF-8
// without control characters or bidirectional overrides, trimmed, at
// most 80 runes and "…", and the title of a title is itself.
func FuzzCutTitle(f *testing.F) {
	for _, s := range []string{"", "hello", "a\x00b", "\xff", "x\u202ey", " \t\r\n z", strings.Repeat("é ", 60), strings.Repeat("a", 80) + " …"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := inlinetag.CutTitle(text)
		if !utf8.ValidString(got) || strings.ContainsFunc(got, func(r rune) bool {
			return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || '\u202a' <= r && r <= '\u202e' || '\u2066' <= r && r <= '\u2069'
		}) {
			t.Fatalf("CutTitle(%q) = %q", text, got)
		}
		if got != strings.TrimSpace(got) || utf8.RuneCountInString(got) > 81 {
			t.Fatalf("CutTitle(%q) = %q: not trimmed or too long", text, got)
		}
		if again := inlinetag.CutTitle(got); again != got {
			t.Fatalf("CutTitle(%q) = %q, but CutTitle(%q) = %q", text, got, got, again)
		}
	})
}
