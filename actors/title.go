package actors

import (
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm/inlinetag"
)

// restoreTitle sets the title from what the store holds, after a restore
// or a rollback: the stored title, or, for a session stored before titles
// were (or whose titled write was rolled back), its first prompt's. Both
// are cut by inlinetag.CutTitle, which gives a title back as it is: a
// title stored before titles were cut as they are now (an import's,
// taken whole) is cut here, and stored so by the next write.
func (s *session) restoreTitle() {
	s.notes.title = inlinetag.CutTitle(s.p.savedTitle)
	if s.notes.title != "" {
		return
	}
	for _, m := range s.hist.Messages() {
		if m.Role == "user" {
			s.notes.title = inlinetag.CutTitle(m.Content)
			if s.notes.title != "" {
				return
			}
		}
	}
}

// generatedTitle makes the title a model wrote with <title> the session's
// (cut as inlinetag.Title cuts a prompt), stored with it, and tells it.
func (s *session) generatedTitle(text string) {
	t := inlinetag.CutTitle(text)
	if t == "" {
		return
	}
	if t != s.notes.title {
		s.notes.title = t
		s.touch()
	}
	s.emit(&eventsv1.TitleGenerated{Title: t})
}
