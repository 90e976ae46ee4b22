package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/server/auth"
	"github.com/tack-run/tack/tracing"
)

// recorder remembers what a handler answered, for logging and recovery.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes and
// deadlines of event streams).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// requestLog is what a request's log line learns while the request is
// served: the user authenticate found (withUser), "" when none was.
type requestLog struct{ user string }

type requestLogKey struct{}

// logRequests logs each request's method, path (never the query: it may
// carry an access token), user, status and duration.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		l := &requestLog{}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestLogKey{}, l)))
		s.opts.logger.Info("request", zap.String("method", r.Method), zap.String("path", r.URL.Path),
			zap.String("user", l.user), zap.Int("status", rec.status), zap.Duration("duration", time.Since(start)))
	})
}

// noSniff has browsers take every answer as the type it says: an answer
// echoing what a request sent (an error naming a path) is never read as
// a page.
func noSniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

// traceContext puts the request's W3C trace context (the traceparent
// header) in its context, so the run a prompt starts is traced under it.
func traceContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ctx := tracing.Extract(r.Context(), r.Header); ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// recoverPanics turns a panicking handler into 500 internal (when nothing
// was answered yet) and logs it; the server keeps serving.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec, ok := w.(*recorder)
		if !ok {
			rec = &recorder{ResponseWriter: w}
		}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.opts.logger.Error("handler panicked", zap.String("method", r.Method), zap.String("path", r.URL.Path),
				zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			if rec.status == 0 {
				writeErrorStatus(rec, http.StatusInternalServerError, events.CodeInternal, "the server failed to answer this request")
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// cors answers preflight requests and allows the configured origins; with
// none configured it does nothing.
func (s *Server) cors(next http.Handler) http.Handler {
	if len(s.opts.origins) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		w.Header().Add("Vary", "Origin")
		if origin == "" || !slices.Contains(s.opts.origins, origin) && !slices.Contains(s.opts.origins, "*") {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", "Content-Type, Retry-After")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate names the request's user: from its bearer token (the
// Authorization header, else ?access_token=) with an authenticator,
// LocalUser without one. /healthz and the UI's files need no credential.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.auth == nil {
			next.ServeHTTP(w, withUser(r, LocalUser))
			return
		}
		if s.public[r.URL.Path] && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		user, err := s.opts.auth.User(bearer(r))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tack"`)
			msg := strings.TrimPrefix(err.Error(), auth.ErrUnauthorized.Error()+": ")
			writeErrorStatus(w, http.StatusUnauthorized, events.CodeUnauthorized, msg)
			return
		}
		next.ServeHTTP(w, withUser(r, user))
	})
}

// bearer is the request's token: Authorization: Bearer <token>, else the
// access_token query parameter.
func bearer(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		if strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
		return ""
	}
	return r.URL.Query().Get("access_token")
}

// limitBody caps the request body; reading past the cap fails with an
// error that readBody answers as 413.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.opts.maxBody {
			writeErrorStatus(w, http.StatusRequestEntityTooLarge, events.CodeBadRequest, tooLarge(s.opts.maxBody))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.maxBody)
		next.ServeHTTP(w, r)
	})
}

func tooLarge(n int64) string { return fmt.Sprintf("the body is larger than %d bytes", n) }

// isTooLarge reports whether err is the body cap's.
func isTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// route runs the request's route; an unknown path is 404 and a wrong
// method 405 (with Allow), both unknown_command in JSON.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	// The mux's own answer says which: record its status and Allow
	// header, drop its text body.
	probe := &statusProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		writeErrorStatus(w, http.StatusMethodNotAllowed, events.CodeUnknownCommand,
			fmt.Sprintf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, probe.header.Get("Allow")))
		return
	}
	writeErrorStatus(w, http.StatusNotFound, events.CodeUnknownCommand, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
}

// statusProbe is a ResponseWriter that keeps the status and headers and
// discards the body.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *statusProbe) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
}
