package http

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
)

// A user's requests_per_minute (the auth file's limits) bounds the
// requests they send in any minute — REST requests, event streams,
// WebSocket upgrades, each frame a WebSocket carries and each message
// of an MCP batch — refused ones included. Past it the answer is 429
// rate_limited with Retry-After: when the oldest request of the last
// minute leaves it. Their max_open_requests bounds the requests they
// have open at once, streams included: past it the answer is 429 too.

// requestWindow is one user's latest requests, at most their limit.
type requestWindow struct {
	times []time.Time
	next  int // the oldest, once times is full
}

// latest is the time of the window's newest request.
func (w *requestWindow) latest() time.Time {
	if len(w.times) < cap(w.times) || w.next == 0 {
		return w.times[len(w.times)-1]
	}
	return w.times[w.next-1]
}

// sweepEvery is how many requests pass between sweeps of the windows
// that no longer matter (no request in the last minute).
const sweepEvery = 1024

// requestLimiter keeps the windows of the users who sent a request in
// the last minute (and, between sweeps, a few more).
type requestLimiter struct {
	now   func() time.Time
	mu    sync.Mutex
	by    map[string]*requestWindow
	taken int
}

// take counts a request of user, limited to limit a minute (0: none), and
// returns how long until a request would be allowed: 0 when this one is.
func (l *requestLimiter) take(user string, limit int) time.Duration {
	if limit <= 0 {
		return 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.taken++; l.taken%sweepEvery == 0 {
		for u, w := range l.by {
			if now.Sub(w.latest()) >= time.Minute {
				delete(l.by, u)
			}
		}
	}
	w := l.by[user]
	if w == nil {
		w = &requestWindow{times: make([]time.Time, 0, limit)}
		l.by[user] = w
	}
	if len(w.times) < limit {
		w.times = append(w.times, now)
		return 0
	}
	oldest := w.times[w.next]
	w.times[w.next], w.next = now, (w.next+1)%len(w.times)
	if now.Sub(oldest) >= time.Minute {
		return 0
	}
	return w.times[w.next].Add(time.Minute).Sub(now)
}

// overLimit counts a request of the request's user and answers the error
// of one past their requests_per_minute, nil when it is within it.
func (s *Server) overLimit(r *http.Request) *retryError {
	user := userOf(r)
	if s.opts.auth == nil || user == "" {
		return nil
	}
	limit := s.opts.auth.Policy().Limit(user).RequestsPerMinute
	wait := s.requests.take(user, limit)
	if wait == 0 {
		return nil
	}
	return &retryError{after: wait, err: &tack.Error{Code: events.CodeRateLimited,
		Message: fmt.Sprintf("%s sent more than %d requests in a minute (requests_per_minute): retry in %d s", user, limit, seconds(wait))}}
}

// limitRequests answers 429 to a request past its user's
// requests_per_minute or max_open_requests; a request let through holds
// its place among the open ones until it is answered (an event stream or
// a WebSocket until it ends).
func (s *Server) limitRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e := s.overLimit(r); e != nil {
			s.refuseOverLimit(w, r, e)
			return
		}
		done, e := s.openRequest(r)
		if e != nil {
			s.refuseOverLimit(w, r, e)
			return
		}
		defer done()
		next.ServeHTTP(w, r)
	})
}

// openRequests counts each user's requests open at once.
type openRequests struct {
	mu sync.Mutex
	by map[string]int
}

// openRequest counts a request of the request's user among the open ones
// and returns what ends it; past their max_open_requests it answers the
// error instead, with a retry in a second (when one may have ended).
func (s *Server) openRequest(r *http.Request) (done func(), e *retryError) {
	user := userOf(r)
	if s.opts.auth == nil || user == "" {
		return func() {}, nil
	}
	limit := s.opts.auth.Policy().Limit(user).MaxOpenRequests
	if limit <= 0 {
		return func() {}, nil
	}
	o := &s.open
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by[user] >= limit {
		return nil, &retryError{after: time.Second, err: &tack.Error{Code: events.CodeRateLimited,
			Message: fmt.Sprintf("%s has %d requests open, event streams and WebSockets included (max_open_requests): close one first", user, limit)}}
	}
	if o.by == nil {
		o.by = map[string]int{}
	}
	o.by[user]++
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.by[user]--; o.by[user] == 0 {
			delete(o.by, user)
		}
	}, nil
}

// refuseOverLimit answers a request past its user's limit with 429 and
// Retry-After, and audits it.
func (s *Server) refuseOverLimit(w http.ResponseWriter, r *http.Request, e *retryError) {
	s.auditRefused(r, r.Method+" "+r.URL.Path, e.err)
	w.Header().Set("Retry-After", strconv.Itoa(seconds(e.after)))
	writeError(w, e.err)
}

// limitBatches counts each message of a JSON-RPC batch past the first
// against the user's requests_per_minute (limitRequests counted the
// request itself), as each command a WebSocket carries is: an MCP client
// of the 2025-03-26 protocol may send any number of calls in one POST.
func (s *Server) limitBatches(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || s.opts.auth == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body) // bounded by limitBody
		switch {
		case isTooLarge(err):
			writeErrorStatus(w, http.StatusRequestEntityTooLarge, events.CodeBadRequest, tooLarge(s.opts.maxBody))
			return
		case err != nil:
			writeError(w, protoError(events.CodeBadRequest, "reading the request: "+err.Error()))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		// The first JSON value is the message, as the MCP SDK reads it:
		// bytes after it are ignored there, so they must not hide a batch
		// here.
		var batch []json.RawMessage
		if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
			if err := json.NewDecoder(bytes.NewReader(b)).Decode(&batch); err != nil {
				writeError(w, protoError(events.CodeBadRequest, "the JSON-RPC batch does not parse: "+err.Error()))
				return
			}
			for range len(batch) - 1 {
				if e := s.overLimit(r); e != nil {
					s.refuseOverLimit(w, r, e)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// retryError is a rate_limited error and when to try again.
type retryError struct {
	after time.Duration
	err   *tack.Error
}

// seconds is d in whole seconds, rounded up, at least 1.
func seconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }
