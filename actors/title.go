package actors

import (
	"strings"
	"unicode"
	"unicode/utf8"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// titleRunes is the longest title, in runes, before the ellipsis.
const titleRunes = 80

// titleOf is the title a prompt gives its session: its first line that is
// not blank, trimmed, and cut at 80 runes with "…" when longer.
func titleOf(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
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

// restoreTitle sets the title from what the store holds, after a restore
// or a rollback: the stored title, or, for a session stored before titles
// were (or whose titled write was rolled back), its first prompt's.
func (s *session) restoreTitle() {
	s.title = s.p.savedTitle
	if s.title != "" {
		return
	}
	for _, m := range s.history {
		if m.Role == "user" {
			s.title = titleOf(m.Content)
			if s.title != "" {
				return
			}
		}
	}
}

// generatedTitle makes the title a model wrote with <title> the session's
// (cut as titleOf cuts a prompt), stored with it, and tells it.
func (s *session) generatedTitle(text string) {
	t := titleOf(text)
	if t == "" {
		return
	}
	if t != s.title {
		s.title = t
		s.touch()
	}
	s.emit(&eventsv1.TitleGenerated{Title: t})
}
