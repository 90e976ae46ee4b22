package http

import (
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/tack-run/tack/events"
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
	return s.limitBatches(streaming(jsonErrors(mcpserver.Handler(srv, s.opts.auth != nil, userOf))))
}

// jsonErrors gives h's error answers whose body is not JSON — the MCP
// SDK's plain-text ones: another user's Mcp-Session-Id (403), an unknown
// one (404), a wrong method (405), a missing Content-Type (415)... — the
// server's JSON error body (every error body is application/json), with
// the same status and headers (Allow) and the SDK's text as the message.
// JSON-RPC errors (JSON already) and every other answer, streams
// included, pass untouched.
func jsonErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jw := &jsonErrorWriter{ResponseWriter: w}
		h.ServeHTTP(jw, r)
		jw.finish()
	})
}

// jsonErrorWriter holds back an error answer that is not JSON, to write
// it as JSON once the handler is done (finish).
type jsonErrorWriter struct {
	http.ResponseWriter
	// status is the error held back; 0 when none.
	status int
	// text is what the handler wrote of it (its first maxErrorText bytes).
	text []byte
	// passed says that the answer went through as the handler wrote it.
	passed bool
}

// maxErrorText bounds the text of an error held back.
const maxErrorText = 4 << 10

func (w *jsonErrorWriter) WriteHeader(code int) {
	switch {
	case w.passed || w.status != 0:
		return // a second status: net/http ignores it too
	case code < 200:
		w.ResponseWriter.WriteHeader(code) // informational: the final status comes after
		return
	case code >= 400 && !isJSON(w.Header().Get("Content-Type")):
		w.status = code
		return
	}
	w.passed = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if !w.passed && w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		w.text = append(w.text, b[:min(len(b), maxErrorText-len(w.text))]...)
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes what passed; a flush before any status sends a 200, as
// net/http does; an error held back waits for finish.
func (w *jsonErrorWriter) Flush() {
	if !w.passed && w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.passed {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap is the writer underneath.
func (w *jsonErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the error held back, if any, as JSON.
func (w *jsonErrorWriter) finish() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(string(w.text))
	if msg == "" {
		msg = http.StatusText(w.status)
	}
	writeErrorStatus(w.ResponseWriter, w.status, errorCodeOf(w.status), msg)
}

// errorCodeOf is the protocol code of an error status: what the other
// routes answer with it (docs/http.md).
func errorCodeOf(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return events.CodeUnauthorized
	case status == http.StatusForbidden:
		return events.CodeForbidden
	case status == http.StatusNotFound, status == http.StatusMethodNotAllowed:
		return events.CodeUnknownCommand
	case status == http.StatusTooManyRequests:
		return events.CodeRateLimited
	case status >= 500:
		return events.CodeInternal
	}
	return events.CodeBadRequest
}

// isJSON reports whether a Content-Type is JSON's.
func isJSON(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && (t == "application/json" || strings.HasSuffix(t, "+json"))
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
