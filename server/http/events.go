package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/sse"
	"github.com/tack-run/tack/metrics"
)

// streamWriteTimeout is how long one flush of an event stream may take to
// reach the client before the stream is dropped.
const streamWriteTimeout = 30 * time.Second

// events streams a session's events as Server-Sent Events: the replay
// after since (or Last-Event-ID), then live events, until the client
// goes, the session closes, the server drains, or the stream falls too
// far behind (then it ends with events_lost; the client resumes with
// Last-Event-ID).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	sub, err := s.follow(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer sub.close()
	sw, err := sse.Start(w, streamWriteTimeout)
	if err != nil {
		return
	}
	defer s.stream(metrics.KindSSE)()
	ctx, cancel := s.untilDrain(r.Context())
	defer cancel()
	q := newQuiet(ctx, s.opts.keepAlive)
	defer q.stop()
	var buf []byte
	for {
		// Write what has arrived already, then flush once.
		ev, err := sub.TryNext()
		if ev == nil && err == nil {
			if sw.Buffered() > 0 && sw.Flush() != nil {
				return
			}
			ev, err = sub.wait(q)
		}
		switch {
		case errors.Is(err, errQuiet):
			sw.Comment("keepalive")
			if sw.Flush() != nil {
				return
			}
			continue
		case err == io.EOF:
			sub.ended = true
			_ = sw.Flush()
			return // the session closed
		case err != nil:
			if s.draining.Err() != nil && r.Context().Err() == nil {
				sw.Comment("server shutting down")
				_ = sw.Flush()
			}
			return
		}
		buf = writeEvent(sw, ev, buf)
		if sub.behind(ev) { // the client resumes
			_ = sw.Flush()
			return
		}
		if sw.Buffered() > 64<<10 && sw.Flush() != nil {
			return
		}
	}
}

// feed is the reader of one event stream (SSE or WebSocket).
type feed struct {
	*tack.Reader
	first bool // no event has come yet
	// ended is set by the reader that saw the session end it: closing
	// the reader then has nothing to tell the session.
	ended bool
}

// errQuiet is wait's error when no event came for a while.
var errQuiet = errors.New("no event")

// wait waits for the next event until q's context ends, or q's interval
// passes with none: errQuiet.
func (f *feed) wait(q *quiet) (*eventsv1.Event, error) {
	ev, err := f.Next(q.arm())
	if err != nil && q.parent.Err() == nil && errors.Is(err, context.Canceled) {
		return nil, errQuiet
	}
	return ev, err
}

// quiet ends a stream's waits for events after an interval with none,
// for its keepalives. A context and a timer per wait would cost every
// event of the stream a child context of the request's and a timer
// added and removed; a quiet has one of each and re-arms the timer,
// making a new context only after the interval passed.
type quiet struct {
	parent context.Context
	d      time.Duration
	ctx    context.Context // a child of parent, cancelled by timer
	cancel context.CancelFunc
	timer  *time.Timer
}

func newQuiet(parent context.Context, d time.Duration) *quiet {
	return &quiet{parent: parent, d: d}
}

// arm returns the context of the next wait, cancelled d from now unless
// parent ends first.
func (q *quiet) arm() context.Context {
	if q.timer != nil && q.timer.Reset(q.d) {
		return q.ctx // the timer had not fired: the context is live
	}
	q.stop()
	q.ctx, q.cancel = context.WithCancel(q.parent)
	q.timer = time.AfterFunc(q.d, q.cancel)
	return q.ctx
}

// stop releases the timer and the context.
func (q *quiet) stop() {
	if q.timer != nil {
		q.timer.Stop()
		q.cancel()
	}
}

// follow opens the reader a stream request asks for: since (or
// Last-Event-ID) and types from the request, the session in the path,
// which the request's user must own, and the server's event buffer.
func (s *Server) follow(r *http.Request) (*feed, error) {
	opt, err := subscribeOptions(r)
	if err != nil {
		return nil, err
	}
	opt.Buffer = s.opts.eventBuffer
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.requestTimeout)
	defer cancel()
	id := r.PathValue("id")
	if err := s.owns(ctx, r, id); err != nil {
		return nil, err
	}
	sess, err := s.rt.Session(id)
	if err != nil {
		return nil, err
	}
	rd, err := sess.Read(ctx, opt)
	if err != nil {
		return nil, err
	}
	return &feed{Reader: rd, first: true}, nil
}

// behind reports whether ev, the next event of the feed, says the stream
// fell further behind than its buffer: an events_lost other than the
// replay's first notice (which only says the ring no longer reaches back
// to since). The stream then ends after writing it, and the client
// resumes from its last seq.
func (f *feed) behind(ev *eventsv1.Event) bool {
	first := f.first
	f.first = false
	return ev.GetEventsLost() != nil && !first
}

// close ends the reader, unless the session already did.
func (f *feed) close() {
	if !f.ended {
		_ = f.Reader.Close()
	}
}

// writeEvent adds ev to the stream: id its seq (none for events_lost,
// whose seq is 0, so the client's Last-Event-ID stays the last event it
// got), event its type, data its JSON. buf is reused.
func writeEvent(sw *sse.Writer, ev *eventsv1.Event, buf []byte) []byte {
	buf = eventjson.Append(buf[:0], ev)
	id := ""
	if ev.GetSeq() != 0 {
		id = strconv.FormatUint(ev.GetSeq(), 10)
	}
	sw.Event(id, events.Type(ev), buf)
	return buf
}

// subscribeOptions reads since (the Last-Event-ID header wins over the
// since parameter, since a reconnecting browser sends both) and types
// (repeated, or comma-separated) from the request.
func subscribeOptions(r *http.Request) (tack.SubscribeOptions, error) {
	var opt tack.SubscribeOptions
	since, hasSince := "", false
	for k, vs := range r.URL.Query() {
		switch k {
		case "access_token":
		case "since":
			since, hasSince = vs[0], true
		case "types":
			for _, v := range vs {
				for _, t := range strings.Split(v, ",") {
					if t = strings.TrimSpace(t); t != "" {
						opt.Types = append(opt.Types, t)
					}
				}
			}
		default:
			return opt, protoError(events.CodeBadRequest, fmt.Sprintf("subscribe has no parameter %q", k))
		}
	}
	if h := r.Header.Get("Last-Event-ID"); h != "" {
		since, hasSince = h, true
	}
	if !hasSince {
		opt.Buffered = true // everything still buffered, without events_lost
		return opt, nil
	}
	n, err := strconv.ParseUint(strings.TrimSpace(since), 10, 64)
	if err != nil {
		return opt, protoError(events.CodeBadRequest, fmt.Sprintf("since (or Last-Event-ID) must be an event seq, not %q", since))
	}
	opt.Since = n
	return opt, nil
}
