package agui

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/tack-run/tack/internal/sse"
)

// streamWriteTimeout is how long one flush may take to reach the client
// before the stream is dropped.
const streamWriteTimeout = 30 * time.Second

// sseWriter writes AG-UI events on an event stream (internal/sse): one
// `data:` line of JSON each, with no id or event line, as AG-UI clients
// expect.
type sseWriter struct {
	sw *sse.Writer
}

// newSSE starts the stream.
func newSSE(w http.ResponseWriter) (*sseWriter, error) {
	sw, err := sse.Start(w, streamWriteTimeout)
	return &sseWriter{sw: sw}, err
}

// send writes events and flushes them.
func (s *sseWriter) send(evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	for _, ev := range evs {
		j, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		s.sw.Event("", "", j)
	}
	return s.sw.Flush()
}

// keepalive writes an SSE comment, which clients ignore, so that proxies
// keep an idle stream open.
func (s *sseWriter) keepalive() error {
	s.sw.Comment("keepalive")
	return s.sw.Flush()
}
