package chatui

import (
	"strings"
)

// lineBuffer turns streamed text into whole lines no wider than width, so
// output never shares a line with the prompt below it.
type lineBuffer struct {
	width int
	line  strings.Builder
}

// add takes streamed text and returns the lines it completes, each ending
// in a newline.
func (b *lineBuffer) add(s string) string {
	var out strings.Builder
	for _, r := range s {
		if r == '\n' {
			out.WriteString(b.line.String())
			out.WriteByte('\n')
			b.line.Reset()
			continue
		}
		b.line.WriteRune(r)
		if b.width > 0 && visibleWidth(b.line.String()) >= b.width {
			out.WriteString(b.breakLine())
		}
	}
	return out.String()
}

// flush returns the unfinished line, if any, ending it.
func (b *lineBuffer) flush() string {
	if b.line.Len() == 0 {
		return ""
	}
	s := b.line.String() + "\n"
	b.line.Reset()
	return s
}

// visibleWidth counts the runes of s a terminal shows: ANSI escape
// sequences take no room.
func visibleWidth(s string) int {
	n, esc := 0, false
	for _, r := range s {
		switch {
		case esc:
			esc = !(r >= '@' && r <= '~' && r != '[')
		case r == '\x1b':
			esc = true
		default:
			n++
		}
	}
	return n
}

// breakLine ends the full line at its last space (or hard, if it has none)
// and keeps the rest for the next line.
func (b *lineBuffer) breakLine() string {
	s := b.line.String()
	cut := strings.LastIndexByte(s, ' ')
	if cut <= 0 {
		cut = len(s)
	}
	head, rest := s[:cut], strings.TrimLeft(s[cut:], " ")
	b.line.Reset()
	b.line.WriteString(rest)
	return head + "\n"
}
