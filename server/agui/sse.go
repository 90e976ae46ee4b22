package agui

import (
	"encoding/json"
	"net/http"
)

// sseWriter writes AG-UI events as server-sent events: one `data:` line of
// JSON each, then a blank line. Lines end in "\n" alone, as the AG-UI
// client splits events on "\n\n".
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf []byte
}

// newSSE sends the stream's headers.
func newSSE(w http.ResponseWriter) (*sseWriter, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	return s, s.rc.Flush()
}

// send writes events and flushes them.
func (s *sseWriter) send(evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	b := s.buf[:0]
	for _, ev := range evs {
		j, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		b = append(append(append(b, "data: "...), j...), "\n\n"...)
	}
	s.buf = b
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// keepalive writes an SSE comment, which clients ignore, so that proxies
// keep an idle stream open.
func (s *sseWriter) keepalive() error {
	if _, err := s.w.Write([]byte(": keepalive\n\n")); err != nil {
		return err
	}
	return s.rc.Flush()
}
