package rpc

import (
	"bufio"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/command"
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
	w.buf = append(eventjson.Append(w.buf[:0], ev), '\n')
	w.write()
}

// response writes one response line.
func (w *writer) response(h command.Header, data proto.Message, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(command.AppendResponse(w.buf[:0], h, data, err), '\n')
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
