package http

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/sse"
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
	opt, err := subscribeOptions(r)
	if err != nil {
		writeError(w, err)
		return
	}
	opt.Buffer = s.opts.eventBuffer
	id := r.PathValue("id")
	sub, err := s.subscribe(r, id, opt)
	if err != nil {
		writeError(w, err)
		return
	}
	// A subscription the session ended needs no Close: asking a session
	// that is stopping can go unanswered until the runtime's request
	// timeout (10 s by default), and the stream would stay open as long.
	ended := false
	defer func() {
		if !ended {
			_ = sub.Close()
		}
	}()
	sw, err := sse.Start(w, streamWriteTimeout)
	if err != nil {
		return
	}
	keepalive := time.NewTicker(s.opts.keepAlive)
	defer keepalive.Stop()
	first := true
	var buf []byte
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				ended = true // the session closed
				return
			}
			// Write what has arrived already, then flush once.
			for {
				buf = writeEvent(sw, ev, buf)
				// events_lost other than the replay's first notice means
				// this stream fell behind: end it, the client resumes.
				if ev.GetEventsLost() != nil && !first {
					_ = sw.Flush()
					return
				}
				first = false
				if sw.Buffered() > 64<<10 || len(sub.C) == 0 {
					break
				}
				if ev, ok = <-sub.C; !ok {
					ended = true
					_ = sw.Flush()
					return
				}
			}
			if sw.Flush() != nil {
				return
			}
			keepalive.Reset(s.opts.keepAlive)
		case <-keepalive.C:
			sw.Comment("keepalive")
			if sw.Flush() != nil {
				return
			}
		case <-s.stopping:
			sw.Comment("server shutting down")
			_ = sw.Flush()
			return
		case <-r.Context().Done():
			return
		}
	}
}

// subscribe checks the request's user owns the session, then subscribes
// to it.
func (s *Server) subscribe(r *http.Request, id string, opt tack.SubscribeOptions) (*tack.Subscription, error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.requestTimeout)
	defer cancel()
	if err := s.owns(ctx, r, id); err != nil {
		return nil, err
	}
	sess, err := s.rt.Session(id)
	if err != nil {
		return nil, err
	}
	return sess.Subscribe(ctx, opt)
}

// writeEvent adds ev to the stream: id its seq (none for events_lost,
// whose seq is 0, so the client's Last-Event-ID stays the last event it
// got), event its type, data its JSON. buf is reused.
func writeEvent(sw *sse.Writer, ev *eventsv1.Event, buf []byte) []byte {
	buf = events.AppendJSON(buf[:0], ev)
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
