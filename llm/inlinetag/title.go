package inlinetag

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// titleRunes is the longest title, in runes, before the ellipsis.
const titleRunes = 80

// CutTitle is the title a text gives a session — a user's first prompt, or
// what a model wrote in <title>: its first line that is not blank,
// trimmed, and cut at 80 runes with "…" when longer.
func CutTitle(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) <= titleRunes {
		return line
	}
	n := 0
	for i := range line {
		if n == titleRunes {
			return strings.TrimRightFunc(line[:i], unicode.IsSpace) + "…"
		}
		n++
	}
	return line
}
