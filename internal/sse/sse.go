package sse

import (
	"bytes"
	"net/http"
	"time"
)

// Writer writes one event stream. Event and Comment add to a buffer;
// Flush sends it to the client.
type Writer struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	// deadline is the write deadline last set; now is the clock.
	deadline time.Time
	now      func() time.Time
	buf      []byte
}

// Start answers the request with an event stream: it sends the headers
// (status 200, Content-Type text/event-stream, no caching, no proxy
// buffering) and lifts the server's read and write deadlines, which would
// otherwise cut a long stream; each Flush instead has writeTimeout (0:
// none) to reach the client, so a client that stops reading is dropped.
// (Setting a deadline costs a timer change, so Flush moves it only once
// less than three quarters of writeTimeout is left: a flush has between
// three quarters of writeTimeout and all of it.)
func Start(w http.ResponseWriter, writeTimeout time.Duration) (*Writer, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	// Servers without deadlines (httptest recorders) cannot set them,
	// and need not.
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	sw := &Writer{w: w, rc: rc, timeout: writeTimeout, now: time.Now}
	return sw, sw.Flush()
}

// Event adds one message: an id line (left out when id is empty, so the
// client's last event id stays as it was), an event line (left out when
// typ is empty) and data, one data line for each of its lines.
func (w *Writer) Event(id, typ string, data []byte) {
	if id != "" {
		w.buf = append(append(append(w.buf, "id: "...), id...), '\n')
	}
	if typ != "" {
		w.buf = append(append(append(w.buf, "event: "...), typ...), '\n')
	}
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		w.buf = append(append(append(w.buf, "data: "...), bytes.TrimSuffix(line, []byte{'\r'})...), '\n')
		if !more {
			break
		}
		data = rest
	}
	w.buf = append(w.buf, '\n')
}

// Comment adds a comment line, which clients ignore: keepalives and
// notes such as the server shutting down.
func (w *Writer) Comment(text string) {
	w.buf = append(append(append(w.buf, ": "...), text...), "\n\n"...)
}

// Buffered returns the number of bytes waiting for Flush.
func (w *Writer) Buffered() int { return len(w.buf) }

// Flush writes what was added since the last Flush and flushes it to the
// client, within the write timeout.
func (w *Writer) Flush() error {
	if w.timeout > 0 {
		if now := w.now(); w.deadline.Sub(now) < w.timeout-w.timeout/4 {
			w.deadline = now.Add(w.timeout)
			_ = w.rc.SetWriteDeadline(w.deadline)
		}
	}
	if len(w.buf) > 0 {
		_, err := w.w.Write(w.buf)
		w.buf = w.buf[:0]
		if err != nil {
			return err
		}
	}
	return w.rc.Flush()
}
