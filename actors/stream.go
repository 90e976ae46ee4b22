package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/inlinetag"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/tools"
)

// Codes of error events that are not command replies.
const (
	codeModelError      = "model_error"
	codeContextOverflow = "context_overflow"
)

// interruptedSuffix ends assistant text cut by an abort or a stream failure.
const interruptedSuffix = "\n\n[interrupted]"

// partial is the response being streamed: what an interruption commits.
type partial struct {
	// model serves the request, even if the session switches meanwhile.
	model *llm.Model
	// req is the request, for estimating usage a provider does not report.
	req *llm.Request
	// modelState is the model's own state before the request took its
	// turn (llm.Stateful): what a write stores while the request is in
	// flight, so a crash before its response is committed plays it again.
	// Nil in a runtime that writes nothing (no store, no Park).
	modelState []byte
	// text is the text shown so far (message_delta): the model's text
	// less its inline tags, which tags takes out.
	text     strings.Builder
	thinking strings.Builder
	tags     inlinetag.Extractor
}

// pump runs one model request on its own goroutine and reports every chunk
// and the end to the session, tagged with the turn it belongs to. At most
// streamWindow chunks wait in the session's mailbox: a provider that
// streams faster than the session publishes waits in its emit, which
// holds its connection back, rather than piling up chunks the session's
// subscribers would hear of ever later. A pump waiting for room gives up
// once ctx is done (the run aborted or over) and drops the chunk: the
// session would drop it anyway.
func pump(ctx context.Context, home home, p llm.Provider, req *llm.Request, t tag) {
	w := newWindow()
	resp, err := stream(ctx, p, req, func(c llm.Chunk) {
		if w.acquire(ctx) {
			home.post(&streamChunk{tag: t, chunk: c, window: w})
		}
	})
	home.post(&streamDone{tag: t, resp: resp, err: err})
}

// streamWindow is how many chunks of one model request may wait in the
// session's mailbox: about a millisecond of the session's work.
const streamWindow = 1024

// window counts the chunks of one model request that wait in the
// session's mailbox: the pump acquires a slot before it sends one, the
// mailbox releases it as it takes the chunk. It is one allocation: the
// cond a full window's pump waits on is part of it.
type window struct {
	queued atomic.Int32
	mu     sync.Mutex
	// room is broadcast when a full window has drained to half, and when
	// the waiting pump's context is done.
	room sync.Cond
}

func newWindow() *window {
	w := &window{}
	w.room.L = &w.mu
	return w
}

// acquire takes a slot, waiting while the window is full; it reports
// false, without a slot, once ctx is done.
func (w *window) acquire(ctx context.Context) bool {
	if w.queued.Load() >= streamWindow {
		w.mu.Lock()
		stop := context.AfterFunc(ctx, w.wake)
		for w.queued.Load() >= streamWindow && ctx.Err() == nil {
			w.room.Wait()
		}
		w.mu.Unlock()
		stop()
		if ctx.Err() != nil {
			return false
		}
	}
	w.queued.Add(1)
	return true
}

// release gives a slot back.
func (w *window) release() {
	if w.queued.Add(-1) == streamWindow/2 {
		w.wake()
	}
}

// wake wakes a pump waiting for room.
func (w *window) wake() {
	w.mu.Lock()
	w.room.Broadcast()
	w.mu.Unlock()
}

// stream calls p.Stream and turns a provider that panics or answers
// nothing into a failed request: a provider's bug fails one request, not
// the process or the session.
func stream(ctx context.Context, p llm.Provider, req *llm.Request, emit func(llm.Chunk)) (resp *llm.Response, err error) {
	defer func() {
		if v := recover(); v != nil {
			resp, err = nil, fmt.Errorf("provider panicked: %v", v)
		}
	}()
	resp, err = p.Stream(ctx, req, emit)
	if err == nil && (resp == nil || resp.Message == nil) {
		err = errors.New("provider returned no response")
	}
	return resp, err
}

// firstChunk moves running to streaming, then handles the chunk. Retry
// and stall reports are not output: the session stays running.
func (s *session) firstChunk(m *streamChunk) {
	if !s.current(m.tag) || s.signal(m.chunk) {
		return
	}
	s.fire(fsm.FirstChunk)
	s.emit(&eventsv1.MessageStart{Role: llm.RoleAssistant})
	s.chunk(m)
}

// chunk relays one streamed chunk.
func (s *session) chunk(m *streamChunk) {
	if !s.current(m.tag) {
		return
	}
	p := s.run.stream
	switch c := m.chunk; c.Kind {
	case llm.ChunkText:
		s.showText(p, p.tags.Write(c.Text))
	case llm.ChunkThinkingStart:
		s.emit(&eventsv1.ThinkingStart{})
	case llm.ChunkThinking:
		p.thinking.WriteString(c.Text)
		s.emit(&eventsv1.ThinkingDelta{Delta: c.Text})
	default:
		s.signal(c)
	}
}

// signal reports a provider's retry or stall; it tells whether c was one.
func (s *session) signal(c llm.Chunk) bool {
	switch c.Kind {
	case llm.ChunkRetry:
		s.emit(&eventsv1.Retry{Attempt: int32(c.Attempt), DelayMs: c.Delay.Milliseconds(), Reason: c.Text})
	case llm.ChunkStalled:
		s.emit(&eventsv1.StreamStalled{ElapsedMs: c.Elapsed.Milliseconds()})
	default:
		return false
	}
	return true
}

// responseDone handles the end of a model request.
func (s *session) responseDone(m *streamDone) {
	if !s.current(m.tag) {
		return
	}
	if m.err != nil {
		s.streamFailed(m.err)
		return
	}
	p := s.run.stream
	s.showText(p, p.tags.Flush())
	s.run.stream = nil
	resp := m.resp
	usage := resp.Usage
	if usage == nil {
		usage = llm.EstimateUsage(p.req, resp.Message)
	} else if s.spec.Stored.Context.Budget(s.spec.Model.ContextWindow) > 0 {
		// Only a token budget needs the scale, and the estimate reads the
		// whole request: sessions without one skip it.
		if est := llm.EstimateUsage(p.req, resp.Message).InputTokens; est > 0 && usage.InputTokens > 0 {
			s.notes.spending().tokenScale = float64(usage.InputTokens) / float64(est)
		}
	}
	usage.CostUsd = responseCost(usage, p.model.Cost)
	s.run.overflowed = false
	msg, calls := s.kept(resp.Message)
	s.emit(&eventsv1.ResponseComplete{Message: msg, StopReason: resp.StopReason, Usage: usage})
	if says(msg) {
		s.commit(msg)
	}
	s.account(p.model, usage)
	if s.abortAfterResponse(msg) {
		return
	}
	if d := s.hook(&plugins.Event{Hook: plugins.AfterResponse, Message: msg}).Stop; d != nil {
		s.responseStopped(msg, d)
		return
	}
	if len(calls) > 0 {
		s.startBatch(calls)
		return
	}
	s.turnDone(false)
}

// InvalidToolName is the name the history keeps a tool call under when
// the model gave one no provider accepts ("", "functions.echo": see
// tools.ValidName). Sent back as it came, the name would have every later
// request of the session refused.
const InvalidToolName = "invalid_tool_name"

// kept is a response's message as the history keeps it — inline tags
// stripped, every tool call id one the session has not used
// (history.Fresh), every invalid tool name replaced by InvalidToolName —
// and the calls to run: the kept ones, but under the names the model
// gave, so that a call with an invalid name is answered as the unknown
// tool it is, in words that show the model what it sent.
func (s *session) kept(resp *llm.Message) (msg *llm.Message, calls []*llm.ToolCall) {
	msg = s.hist.Fresh(stripTags(resp))
	calls = msg.ToolCalls
	if !slices.ContainsFunc(calls, invalidCall) {
		return msg, calls
	}
	msg = proto.Clone(msg).(*llm.Message)
	for _, c := range msg.ToolCalls {
		if invalidCall(c) {
			c.Name = InvalidToolName
		}
	}
	return msg, calls
}

// invalidCall reports whether c names no tool a provider would accept.
func invalidCall(c *llm.ToolCall) bool { return !tools.ValidName(c.Name) }

// says reports whether a response has anything to keep in the history:
// text or tool calls. One with neither (no output at all, thinking only,
// only inline tags) is told by response_complete but not committed: a
// provider refuses an assistant message with no content and no calls, and
// the thinking is never sent back.
func says(m *llm.Message) bool {
	return strings.TrimSpace(m.Content) != "" || len(m.ToolCalls) > 0
}

// responseStopped: a plugin skipped or aborted a complete response. Its
// tool calls are not run but answered, so the history stays valid; a skip
// then ends the turn like a plain answer, an abort ends the run.
func (s *session) responseStopped(msg *llm.Message, d *plugins.Decision) {
	text := tools.InterruptedByAbort
	if d.Action.Kind == plugins.Skip {
		text = fmt.Sprintf("skipped by plugin %s: %s", d.Plugin, d.Action.Reason)
	}
	for _, tc := range msg.ToolCalls {
		s.commit(llm.ToolResultMessage(tc.Id, text, true))
	}
	if d.Action.Kind == plugins.Skip {
		s.turnDone(false)
		return
	}
	s.endTurn()
	s.abortBy(d)
}

// streamFailed ends the run after a provider failure. Output already
// streamed is committed like an interruption, so the history stays valid.
func (s *session) streamFailed(err error) {
	code := codeModelError
	if e, ok := err.(*llm.Error); ok && e.Overflow && s.retryCompacted(e) {
		return
	}
	if e, ok := err.(*llm.Error); ok && e.Overflow {
		s.emit(&eventsv1.ContextOverflow{Reason: e.Message})
		code = codeContextOverflow
	}
	if s.commitPartial() {
		s.emit(&eventsv1.StreamError{Error: err.Error()})
	} else {
		s.emit(&eventsv1.Error{Code: code, Message: err.Error()})
	}
	s.endTurn()
	s.finishRun(fsm.Finish, events.EndError)
}

// retryCompacted answers a context overflow before any output, in a
// session with context options and not right after such a retry, by
// compacting the history and sending the request again once that is done;
// it reports whether it did.
func (s *session) retryCompacted(e *llm.Error) bool {
	p := s.run.stream
	if s.spec.Stored.Context == nil || s.run.overflowed || p == nil || p.text.Len() > 0 || p.thinking.Len() > 0 || p.tags.Holding() ||
		s.compaction.running != nil || s.hist.CompactCut(s.spec.Stored.Context.Keep()) == 0 {
		return false
	}
	s.run.stream = nil
	s.run.overflowed, s.run.awaitCompact = true, true
	s.emit(&eventsv1.ContextOverflow{Reason: e.Message})
	s.endTurn()
	return s.startCompaction(true)
}

// commitPartial commits the text streamed so far, marked interrupted; it
// reports whether there was any. Partial tool calls are dropped: they have
// no results and were never shown as calls.
func (s *session) commitPartial() bool {
	p := s.run.stream
	s.run.stream = nil
	if p != nil {
		s.showText(p, p.tags.Flush())
	}
	if p == nil || (p.text.Len() == 0 && p.thinking.Len() == 0) {
		return false
	}
	msg := llm.AssistantMessage(p.text.String() + interruptedSuffix)
	msg.Thinking = p.thinking.String()
	s.commit(msg)
	return true
}

// account adds the usage of a response that model served to the run and
// the session, at model's price, and reports the context use (token_usage).
func (s *session) account(model *llm.Model, u *llm.Usage) {
	if u == nil {
		return
	}
	s.run.usage.add(u, model.Cost)
	spent := s.notes.spending()
	spent.total.add(u, model.Cost)
	s.home.env.observer().Tokens(u.InputTokens, u.OutputTokens)
	spent.context = u.InputTokens
	window, percent := s.contextWindow(model)
	defer s.checkOverflow(model, u)
	if c := s.spec.Stored.Context; c != nil && c.CompactAtPercent > 0 && percent != nil && *percent >= c.CompactAtPercent {
		s.compaction.wanted = true
	}
	s.emit(&eventsv1.TokenUsage{
		ContextUsed:        spent.context,
		ContextWindow:      window,
		ContextPercent:     percent,
		SessionTotalTokens: spent.total.total(),
		Model:              model.Name,
		CostUsd:            spent.total.cost,
	})
}

// checkOverflow reports a response whose usage shows the server silently
// cut a prompt that did not fit the window. The run goes on: the next
// request fails with the server's own overflow error if it still does not fit.
func (s *session) checkOverflow(model *llm.Model, u *llm.Usage) {
	if llm.Overflowed(u, model.ContextWindow) {
		reason := fmt.Sprintf("usage of %d input and %d output tokens exceeds the %d-token context window of %s",
			u.InputTokens, u.OutputTokens, model.ContextWindow, model.Name)
		s.emit(&eventsv1.ContextOverflow{Reason: reason})
		s.emit(&eventsv1.Error{Code: codeContextOverflow, Message: reason})
	}
}

// contextWindow returns model's window and the share of it in use, or nils
// when the window is unknown.
func (s *session) contextWindow(model *llm.Model) (window *int64, percent *float64) {
	w := model.ContextWindow
	if w <= 0 {
		return nil, nil
	}
	p := float64(s.notes.usage().context) * 100 / float64(w)
	return &w, &p
}

// cancelled reports whether err is a context cancellation.
func cancelled(err error) bool {
	return err == context.Canceled || err == context.DeadlineExceeded
}
