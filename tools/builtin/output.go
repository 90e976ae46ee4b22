package builtin

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// cappedBuffer keeps the head and the tail of what is written to it, at
// most limit bytes in all, and counts what it drops in between.
type cappedBuffer struct {
	headCap, tailCap int
	head, tail       []byte
	total            int64
}

func newCappedBuffer(limit int) *cappedBuffer {
	return &cappedBuffer{headCap: limit / 2, tailCap: limit - limit/2}
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
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

// String returns everything written if it fits, else the head, a marker
// saying how many bytes were left out, and the tail.
func (b *cappedBuffer) String() string {
	if b.total <= int64(b.headCap+b.tailCap) {
		return string(b.head) + string(b.tail)
	}
	head := b.head
	tail := b.tail[len(b.tail)-b.tailCap:]
	// Cut at rune boundaries so the marker does not split a character.
	head = trimPartialRune(head)
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	omitted := b.total - int64(len(head)) - int64(len(tail))
	return fmt.Sprintf("%s\n[output truncated: %d bytes]\n%s", head, omitted, tail)
}

// trimPartialRune drops an incomplete UTF-8 sequence from the end of b.
func trimPartialRune(b []byte) []byte {
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
			piece := trimPartialRune(s.pending[:maxUpdate])
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

// teeWriter writes to a buffer and a streamer. The shell gives the same
// *teeWriter as stdout and stderr, so os/exec calls Write from one
// goroutine at a time.
type teeWriter struct {
	buf    *cappedBuffer
	stream *lineStreamer
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	return w.stream.Write(p)
}
