package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/tack-run/tack/internal/workers"
	"github.com/tack-run/tack/llm"
)

// item is what the reading goroutine hands to Stream: a chunk, or the end
// of the stream with its error (nil at a clean end).
type item struct {
	chunk chunk
	end   bool
	err   error
}

// itemBuffer lets the reader decode a few chunks ahead of the emitter.
const itemBuffer = 16

// errorResponse is an HTTP error response, caught before the SDK reads it.
type errorResponse struct {
	status int
	header http.Header
	body   []byte
}

// capture returns SDK middleware that stores an error response in into.
// It runs on the reading goroutine, which hands over into through the
// item channel.
func capture(into *errorResponse) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err != nil || res.StatusCode < 400 {
			return res, err
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, errorBodyLimit))
		_ = res.Body.Close()
		*into = errorResponse{status: res.StatusCode, header: res.Header, body: body}
		res.Body = io.NopCloser(bytes.NewReader(body))
		return res, nil
	}
}

// attempt sends the request once and streams its response. It returns
// the response, or why it failed; a nil response with a nil failure never
// happens. When ctx is cancelled it returns at once (the failure then
// carries no meaning: Stream returns ctx.Err()).
func (p *Provider) attempt(ctx context.Context, model string, body []byte, out *output) (*llm.Response, *failure) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var res errorResponse
	items := make(chan item, itemBuffer)
	workers.Go(func() { p.read(actx, body, capture(&res), items) })

	var acc accumulator
	w := newWatch(p.stallAfter, p.stallLimit)
	defer w.stop()
	for {
		select {
		case <-ctx.Done():
			return nil, &failure{err: &llm.Error{Message: ctx.Err().Error()}}
		case it := <-items:
			if it.end {
				return p.end(ctx, it.err, &res, &acc, model, out)
			}
			acc.add(&it.chunk, out)
			w.reset()
		case <-w.c():
			elapsed, limit := w.fire()
			if limit {
				return nil, stallFailure(elapsed, out.started)
			}
			out.emit(llm.Chunk{Kind: llm.ChunkStalled, Elapsed: elapsed})
		}
	}
}

// read streams the request and hands each chunk, then the end, to items.
// It gives up as soon as ctx is done.
func (p *Provider) read(ctx context.Context, body []byte, mw option.Middleware, items chan<- item) {
	var raw *http.Response
	err := p.api.Post(ctx, "chat/completions", body, &raw, option.WithMiddleware(mw))
	stream := ssestream.NewStream[chunk](ssestream.NewDecoder(raw), err)
	defer stream.Close()
	for stream.Next() {
		select {
		case items <- item{chunk: stream.Current()}:
		case <-ctx.Done():
			return
		}
	}
	select {
	case items <- item{end: true, err: stream.Err()}:
	case <-ctx.Done():
	}
}

// end finishes an attempt whose stream ended with err (nil at a clean end).
func (p *Provider) end(ctx context.Context, err error, res *errorResponse, acc *accumulator, model string, out *output) (*llm.Response, *failure) {
	if ctx.Err() != nil {
		return nil, &failure{err: &llm.Error{Message: ctx.Err().Error()}}
	}
	var streamErr *ssestream.StreamError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil && acc.chunks == 0:
		return nil, &failure{err: &llm.Error{Message: "the server ended the stream without sending anything"}, retryable: true}
	case err == nil && acc.finish == "error":
		return nil, &failure{err: &llm.Error{Message: `the model stopped with finish reason "error"`}, retryable: true}
	case err == nil:
		return acc.response(out), nil
	case res.status != 0:
		return nil, p.failure(parseError(res.status, res.body), res.header, model)
	case errors.As(err, &streamErr):
		return nil, p.failure(parseError(0, streamErr.Event.Data), nil, model)
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		return nil, &failure{err: &llm.Error{Message: fmt.Sprintf("the server sent a chunk that is not Chat Completions JSON: %v", err)}}
	}
	return nil, p.connectionFailure(err, acc.chunks > 0)
}

// watch times the silences of a stream (see WithStall). It reports the
// silence it was set to wait for, not a measured one, so reports are
// exact multiples of after (and limit).
type watch struct {
	after, limit time.Duration
	// silent is the silence reported so far; nextReport the next one due.
	silent, nextReport time.Duration
	timer              *time.Timer
}

// never stands for a disabled timer.
const never = time.Duration(1<<63 - 1)

// newWatch starts a watch; after or limit of 0 or less disable either.
func newWatch(after, limit time.Duration) *watch {
	if after <= 0 {
		after = never
	}
	if limit <= 0 {
		limit = never
	}
	w := &watch{after: after, limit: limit}
	w.nextReport = after
	if d := min(after, limit); d != never {
		w.timer = time.NewTimer(d)
	}
	return w
}

// c returns the channel the watch fires on; nil (never ready) when off.
func (w *watch) c() <-chan time.Time {
	if w.timer == nil {
		return nil
	}
	return w.timer.C
}

// reset restarts the silence at data.
func (w *watch) reset() {
	if w.timer == nil {
		return
	}
	w.silent, w.nextReport = 0, w.after
	w.timer.Reset(min(w.after, w.limit))
}

// fire advances the watch when its timer fired and returns the silence
// reached, and whether it is the limit.
func (w *watch) fire() (time.Duration, bool) {
	due := min(w.nextReport, w.limit)
	w.silent = due
	if due >= w.limit {
		return due, true
	}
	w.nextReport += w.after
	if w.nextReport < 0 { // overflow
		w.nextReport = never
	}
	w.timer.Reset(min(w.nextReport, w.limit) - w.silent)
	return due, false
}

// stop releases the timer.
func (w *watch) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}
