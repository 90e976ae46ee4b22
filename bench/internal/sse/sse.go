// Package sse reads a text/event-stream as the WHATWG HTML standard's
// "Server-sent events" section parses one (the algorithm browsers'
// EventSource runs): lines end with CRLF, LF or CR; a line starting with
// a colon is a comment; a line "field: value" (one space after the colon
// dropped, a line without a colon being a field with an empty value)
// sets a field; a blank line dispatches the event. data lines join with
// newlines, the event type defaults to "message", the id carries over
// from event to event and an id holding NUL is ignored, as is a field
// that is not data, event, id or retry.
//
// The benchmark drivers read `tack serve`'s event streams with it, as a
// client of the protocol would, rather than matching the server's own
// layout.
//
// # Usage
//
//	r := sse.NewReader(res.Body)
//	for {
//		ev, err := r.Next()
//		if err != nil {
//			return err // io.EOF: the server ended the stream
//		}
//		fmt.Println(ev.ID, ev.Type, ev.Data)
//	}
//
// # Concurrency
//
// A Reader is for one goroutine.
package sse

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// Event is one dispatched event.
type Event struct {
	// ID is the last event ID: the stream's last id field, this event's
	// or an earlier one's.
	ID string
	// Type is the event field, or "message".
	Type string
	// Data is the data lines, joined with newlines.
	Data string
}

// Reader reads events from a stream.
type Reader struct {
	r      *bufio.Reader
	lastID string
	// pendingCR is set when the last line ended with CR, whose LF, if
	// it follows, belongs to that line ending.
	pendingCR bool
	line      []byte
}

// NewReader reads the stream r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 32<<10)}
}

// Next returns the next event; comments and empty events are skipped.
// At the end of the stream it returns io.EOF (an event not ended by a
// blank line is discarded, as the standard says), or the error reading
// it met.
func (r *Reader) Next() (Event, error) {
	var typ string
	var data strings.Builder
	hasData := false
	for {
		line, err := r.readLine()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if !hasData {
				typ = ""
				continue
			}
			if typ == "" {
				typ = "message"
			}
			return Event{ID: r.lastID, Type: typ, Data: data.String()}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "event":
			typ = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.lastID = string(value)
			}
		}
	}
}

// readLine returns the next line without its ending; the slice is valid
// until the next call. It never waits for more than the line: a CR is
// taken as an ending at once, and an LF right after it skipped later.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		buf, err := r.r.Peek(max(r.r.Buffered(), 1))
		if len(buf) == 0 {
			// At the end, a last line without an ending is dropped: it
			// cannot end an event.
			return nil, err
		}
		if r.pendingCR {
			r.pendingCR = false
			if buf[0] == '\n' {
				r.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			r.line = append(r.line, buf...)
			r.r.Discard(len(buf))
			continue
		}
		r.line = append(r.line, buf[:i]...)
		r.pendingCR = buf[i] == '\r'
		r.r.Discard(i + 1)
		return r.line, nil
	}
}
