package rpc

import (
	"bufio"
	"encoding/json"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// writer writes whole lines from several goroutines.
type writer struct {
	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte
}

// event writes one event line.
func (w *writer) event(ev *eventsv1.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(events.AppendJSON(w.buf[:0], ev), '\n')
	w.write()
}

// response writes one response line.
func (w *writer) response(h header, data proto.Message, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := append(w.buf[:0], `{"type":"response","id":`...)
	if len(h.ID) > 0 {
		b = append(b, h.ID...)
	} else {
		b = append(b, "null"...)
	}
	b = appendString(append(b, `,"cmd":`...), h.Cmd)
	if err != nil {
		b = append(b, `,"ok":false,"error":{"code":`...)
		b = appendString(b, tack.Code(err))
		b = appendString(append(b, `,"message":`...), errMessage(err))
		b = append(b, "}}\n"...)
	} else {
		b = append(b, `,"ok":true,"data":`...)
		if data == nil {
			b = append(b, "{}"...)
		} else if b, err = events.AppendMessageJSON(b, data); err != nil {
			panic(err) // every eventsv1 message can be written
		}
		b = append(b, "}\n"...)
	}
	w.buf = b
	w.write()
}

func (w *writer) write() {
	_, _ = w.w.Write(w.buf)
	_ = w.w.Flush()
}

func (w *writer) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.w.Flush()
}

// errMessage is the human part of err.
func errMessage(err error) string {
	if e, ok := err.(*tack.Error); ok {
		return e.Message
	}
	return err.Error()
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
