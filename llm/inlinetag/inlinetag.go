package inlinetag

import "strings"

// Tag names.
const (
	Title  = "title"
	Status = "status"
)

// MaxContent is the longest content of a tag, in bytes: an opening tag
// whose closing tag does not follow within it is plain text, so a stray
// "<title>" delays the text after it by at most this much.
const MaxContent = 1000

// Instruction is the line a system prompt may carry to ask a model for
// titles and status lines; the runtime does not add it on its own.
const Instruction = "When you first answer, name the conversation in a few words inside <title></title>; " +
	"while you work, say what you are doing in one short line inside <status></status>. " +
	"Text inside these tags is not shown as part of your answer."

// Piece is a part of the output: plain text, or the content of a tag.
type Piece struct {
	// Tag is Title or Status for a tag, "" for plain text.
	Tag string
	// Text is the plain text, or the tag's content trimmed of
	// surrounding white space (never empty for a tag).
	Text string
}

// tags are the tags extracted, with their opening and closing forms.
var tags = []struct{ name, open, close string }{
	{Title, "<" + Title + ">", "</" + Title + ">"},
	{Status, "<" + Status + ">", "</" + Status + ">"},
}

// Extractor takes tags out of a text that arrives in chunks. The zero
// value is ready to use.
type Extractor struct {
	// held is text from a "<" that may still become a tag.
	held string
	// afterTag is set right after a tag: a "\n" that comes next is
	// stripped with it.
	afterTag bool
	// out is the pieces of the last call, reused from call to call.
	out []Piece
}

// Write takes the next chunk and returns the pieces it completes, in
// order. The slice is valid until the next call.
func (e *Extractor) Write(chunk string) []Piece {
	e.out = e.out[:0]
	if e.held == "" && strings.IndexByte(chunk, '<') < 0 {
		e.text(chunk)
		return e.out
	}
	e.held += chunk
	e.scan(false)
	return e.out
}

// Flush ends the text: what was held back is decided (an unterminated tag
// is plain text) and returned. The Extractor may then start a new text.
func (e *Extractor) Flush() []Piece {
	e.out = e.out[:0]
	e.scan(true)
	e.afterTag = false
	return e.out
}

// Holding reports whether text is held back, waiting for what follows.
func (e *Extractor) Holding() bool { return e.held != "" }

// Strip returns the plain text of s, its tags taken out.
func Strip(s string) string {
	if strings.IndexByte(s, '<') < 0 {
		return s
	}
	var e Extractor
	var b strings.Builder
	plain := func(pieces []Piece) {
		for _, p := range pieces {
			if p.Tag == "" {
				b.WriteString(p.Text)
			}
		}
	}
	plain(e.Write(s))
	plain(e.Flush())
	return b.String()
}

// scan moves from held to out what can be decided; at the end of the
// text (final) that is everything.
func (e *Extractor) scan(final bool) {
	for e.held != "" {
		i := strings.IndexByte(e.held, '<')
		if i < 0 {
			e.text(e.held)
			e.held = ""
			return
		}
		e.text(e.held[:i])
		e.held = e.held[i:]
		name, content, n := match(e.held, final)
		switch {
		case n < 0: // undecided: wait for more
			return
		case n == 0: // not a tag: the "<" is text
			e.text("<")
			e.held = e.held[1:]
		default:
			e.held = e.held[n:]
			e.afterTag = true
			if content = strings.TrimSpace(content); content != "" {
				e.out = append(e.out, Piece{Tag: name, Text: content})
			}
		}
	}
	e.held = "" // a string that became empty may still hold its buffer
}

// match tells whether s, which starts with "<", starts with a tag: n is
// the tag's length, 0 when s does not start with one, -1 when what
// follows decides (never when final).
func match(s string, final bool) (name, content string, n int) {
	for _, t := range tags {
		if len(s) < len(t.open) {
			if !final && strings.HasPrefix(t.open, s) {
				return "", "", -1
			}
			continue
		}
		if !strings.HasPrefix(s, t.open) {
			continue
		}
		rest := s[len(t.open):]
		j := strings.Index(rest, t.close)
		switch {
		case j >= 0 && j <= MaxContent:
			return t.name, rest[:j], len(t.open) + j + len(t.close)
		case j < 0 && !final && len(rest) < MaxContent+len(t.close):
			return "", "", -1
		}
		return "", "", 0
	}
	return "", "", 0
}

// text appends plain text to out, merged with the plain text before it,
// less the line break that follows a tag.
func (e *Extractor) text(s string) {
	if s == "" {
		return
	}
	if e.afterTag {
		e.afterTag = false
		if s[0] == '\n' {
			if s = s[1:]; s == "" {
				return
			}
		}
	}
	if n := len(e.out); n > 0 && e.out[n-1].Tag == "" {
		e.out[n-1].Text += s
		return
	}
	e.out = append(e.out, Piece{Text: s})
}
