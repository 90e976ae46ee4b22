// Package output keeps what a tool prints within bounds: a Capped keeps
// the head and the tail of it for the result, at most a limit in all,
// and a Writer also streams it line by line as the call's updates until
// it has streamed as much. The shell tool writes a command's output
// through a Writer; the MCP and A2A tools bound what a third party sends
// with a Capped, Cap, CapError and Updates.
//
// # Usage
//
//	out := output.New(1<<20, update)
//	cmd.Stdout, cmd.Stderr = out, out
//	err := cmd.Run()
//	out.Flush()
//	result := out.String()
//
// # Concurrency
//
// A Writer is written from one goroutine at a time (os/exec copies both
// streams with one goroutine when they are the same writer).
//
// # Testing
//
// Table tests of the kept text and of the updates sent.
package output

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// DefaultLimit is what the tools that run third parties' code or ask
// third parties keep of their output by default: 1 MiB.
const DefaultLimit = 1 << 20

// Capped keeps the head and the tail of what is written to it, at most
// limit bytes in all, and counts what it drops in between.
type Capped struct {
	headCap, tailCap int
	head, tail       []byte
	total            int64
}

// NewCapped returns a Capped that keeps at most limit bytes.
func NewCapped(limit int) *Capped {
	return &Capped{headCap: limit / 2, tailCap: limit - limit/2}
}

// Write keeps what fits of p; it never fails.
func (b *Capped) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	rest := p
	if room := b.headCap - len(b.head); room > 0 {
		n := min(room, len(rest))
		b.head = append(b.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		b.tail = append(b.tail, rest...)
		if len(b.tail) > 2*b.tailCap {
			b.tail = append(b.tail[:0], b.tail[len(b.tail)-b.tailCap:]...)
		}
	}
	return len(p), nil
}

// String returns everything written if it fits, else the head, a line
// saying how many bytes were left out, and the tail.
func (b *Capped) String() string {
	if b.total <= int64(b.headCap+b.tailCap) {
		return string(b.head) + string(b.tail)
	}
	head := b.head
	tail := b.tail[len(b.tail)-b.tailCap:]
	// Cut at rune boundaries so the marker does not split a character.
	head = TrimPartialRune(head)
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	omitted := b.total - int64(len(head)) - int64(len(tail))
	return fmt.Sprintf("%s\n[output truncated: %d bytes]\n%s", head, omitted, tail)
}

// Cap is s cut as a Capped of limit bytes keeps it: s itself when it
// fits.
func Cap(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	c := NewCapped(limit)
	_, _ = c.Write([]byte(s))
	return c.String()
}

// CapError is err, or an error whose text is err's cut by Cap when it
// passes limit: a third party's error becomes a tool's result too.
func CapError(err error, limit int) error {
	if err == nil || len(err.Error()) <= limit {
		return err
	}
	return errors.New(Cap(err.Error(), limit))
}

// Updates returns a function that passes pieces of text on to update as
// they come, in pieces of at most 4 KiB, until limit bytes have gone;
// then it says once that the rest is not streamed. A Writer streams by
// line; this streams what a third party sends as it sends it.
func Updates(limit int, update func(string)) func(string) {
	s := &lineStreamer{update: update, budget: limit}
	return func(piece string) {
		for p := []byte(piece); len(p) > 0 && s.budget > 0; {
			n := len(p)
			if n > maxUpdate {
				n = len(TrimPartialRune(p[:maxUpdate]))
			}
			s.send(p[:n])
			p = p[n:]
		}
	}
}

// TrimPartialRune drops an incomplete UTF-8 sequence from the end of b:
// a text cut at a byte count ends with whole runes.
func TrimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// maxUpdate is the longest partial a lineStreamer sends without a newline.
const maxUpdate = 4096

// lineStreamer passes what is written to it on to update one line at a
// time (newline included, so the partials concatenate to the output), long
// lines in pieces of maxUpdate bytes. After budget bytes it sends one
// notice and stops streaming.
type lineStreamer struct {
	update  func(string)
	budget  int
	pending []byte
}

func (s *lineStreamer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && s.budget > 0 {
		take, complete := p, false
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			take, complete = p[:i+1], true
		}
		p = p[len(take):]
		s.pending = append(s.pending, take...)
		for len(s.pending) > maxUpdate && s.budget > 0 {
			piece := TrimPartialRune(s.pending[:maxUpdate])
			s.send(piece)
			s.pending = s.pending[len(piece):]
		}
		if complete {
			s.send(s.pending)
			s.pending = s.pending[:0]
		}
	}
	return n, nil
}

// flush sends what is left of an unterminated last line.
func (s *lineStreamer) flush() {
	if len(s.pending) > 0 {
		s.send(s.pending)
		s.pending = nil
	}
}

func (s *lineStreamer) send(p []byte) {
	if s.budget <= 0 {
		return
	}
	s.budget -= len(p)
	s.update(string(p))
	if s.budget <= 0 {
		s.update("[further output is not streamed; it is in the result]\n")
	}
}

// Writer keeps the head and tail of what is written to it and streams it
// as updates, each within its limit.
type Writer struct {
	buf    *Capped
	stream *lineStreamer
}

// New returns a Writer that keeps at most limit bytes for String and
// sends at most limit bytes to update (nil: nothing is streamed).
func New(limit int, update func(string)) *Writer {
	if update == nil {
		update = func(string) {}
	}
	return &Writer{buf: NewCapped(limit), stream: &lineStreamer{update: update, budget: limit}}
}

// Write keeps p and streams it; it never fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.buf.Write(p)
	return w.stream.Write(p)
}

// Flush streams what is left of an unterminated last line.
func (w *Writer) Flush() { w.stream.flush() }

// String returns everything written if it fits the limit, else its head,
// a line saying how many bytes were left out, and its tail.
func (w *Writer) String() string { return w.buf.String() }
