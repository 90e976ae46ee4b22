package inlinetag

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// titleRunes is the longest title, in runes, before the ellipsis.
const titleRunes = 80

// CutTitle is the title a text gives a session — a user's first prompt,
// what a model wrote in <title>, an imported document's title: its first
// line that is not blank, trimmed, and cut at 80 runes with "…" when
// longer. A line ends at any line break (\n, \r, \v, \f, U+0085, U+2028,
// U+2029). What a title cannot show is left out: bytes that are not
// UTF-8, control characters (C0, DEL and C1, NUL among them; a tab
// becomes a space) and the bidirectional embeddings, overrides and
// isolates (U+202A–U+202E, U+2066–U+2069), which would turn the text
// around it in a UI or a terminal. So a title is always text every store
// keeps, and one line; CutTitle of a title gives it back unchanged.
func CutTitle(text string) string {
	var b strings.Builder
	n := 0 // runes in b
	for len(text) > 0 {
		r, size := utf8.DecodeRuneInString(text)
		text = text[size:]
		switch {
		case r == utf8.RuneError && size == 1: // not UTF-8
			continue
		case lineBreak(r):
			if t := cut(b.String()); t != "" {
				return t
			}
			b.Reset()
			n = 0
			continue
		case r == '\t':
			r = ' '
		case hidden(r):
			continue
		}
		if n == 0 && unicode.IsSpace(r) {
			continue // leading space
		}
		b.WriteRune(r)
		n++
		if n > titleRunes && !unicode.IsSpace(r) {
			break // longer than a title, whatever follows
		}
	}
	return cut(b.String())
}

// cut is line, which holds no line break, trimmed and cut at titleRunes
// with "…" when longer.
func cut(line string) string {
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

// lineBreak reports whether r ends a line.
func lineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// hidden reports whether a title leaves r out: a control character (C0,
// DEL, C1) or a bidirectional embedding, override or isolate.
func hidden(r rune) bool {
	return unicode.IsControl(r) || '\u202a' <= r && r <= '\u202e' || '\u2066' <= r && r <= '\u2069'
}
