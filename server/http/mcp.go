package http

import (
	"net/http"
	"time"

	"github.com/tack-run/tack/server/mcpserver"
)

// mcp serves the runtime's agents as MCP tools at /mcp (streamable
// HTTP; docs/mcp.md): behind auth like every route, each call made as
// the request's user.
func (s *Server) mcp() http.Handler {
	srv, err := mcpserver.New(s.rt, mcpserver.Options{User: LocalUser})
	if err != nil {
		panic("http: " + err.Error()) // every agent of the runtime: cannot fail
	}
	return s.limitBatches(streaming(mcpserver.Handler(srv, s.opts.auth != nil, userOf)))
}

// streaming lifts the server's write timeout from a handler whose
// answers stream for as long as a run lasts (MCP and A2A calls), and
// gives it a writer that flushes (SDKs ask for http.Flusher; the
// server's own writers reach the connection through Unwrap).
func streaming(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{}) // not every writer can: then the timeout stays
		h.ServeHTTP(flusher{w, rc}, r)
	})
}

// flusher is a ResponseWriter that flushes through its controller.
type flusher struct {
	http.ResponseWriter
	rc *http.ResponseController
}

// Flush sends what was written.
func (f flusher) Flush() { _ = f.rc.Flush() }

// Unwrap is the writer underneath.
func (f flusher) Unwrap() http.ResponseWriter { return f.ResponseWriter }
