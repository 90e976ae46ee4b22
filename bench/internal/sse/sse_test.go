package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestNext(t *testing.T) {
	tests := []struct {
		name, stream string
		want         []Event
	}{
		{"tack serve's layout",
			"id: 14\nevent: message_delta\ndata: {\"delta\":\"Hel\"}\n\n: keepalive\n\nid: 15\nevent: agent_end\ndata: {}\n\n",
			[]Event{{"14", "message_delta", `{"delta":"Hel"}`}, {"15", "agent_end", "{}"}}},
		{"CRLF and CR endings",
			"event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r",
			[]Event{{"", "a", "1"}, {"", "b", "2"}}},
		{"data lines join, no space after the colon, default type",
			"data:x\ndata: y\ndata\n\n",
			[]Event{{"", "message", "x\ny\n"}}},
		{"only the first space is dropped",
			"data:  two\n\n",
			[]Event{{"", "message", " two"}}},
		{"the id carries over; an id with NUL is ignored; unknown fields too",
			"id: 7\ndata: a\n\nid: 8\x00\nretry: 10\nfoo: bar\ndata: b\n\n",
			[]Event{{"7", "message", "a"}, {"7", "message", "b"}}},
		{"an event without data is not dispatched, and its type does not carry over",
			"event: x\n\ndata: d\n\n",
			[]Event{{"", "message", "d"}}},
		{"an event cut off at the end is dropped",
			"data: kept\n\ndata: cut\n",
			[]Event{{"", "message", "kept"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte per read too: a line split across reads, a CRLF
			// split between two.
			for _, src := range []io.Reader{strings.NewReader(tt.stream), iotest.OneByteReader(strings.NewReader(tt.stream))} {
				r := NewReader(src)
				var got []Event
				for {
					ev, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, ev)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %q, want %q", got, tt.want)
				}
			}
		})
	}
}

// TestNextDoesNotWaitForLF checks that an event ended by CR is returned
// before the byte after it arrives.
func TestNextDoesNotWaitForLF(t *testing.T) {
	pr, pw := io.Pipe()
	go pw.Write([]byte("data: now\r\r"))
	ev, err := NewReader(pr).Next()
	if err != nil || ev.Data != "now" {
		t.Fatalf("got %q, %v", ev, err)
	}
	pw.Close()
}
