package tracing

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// spans are the open spans of one session, or of a sub-agent under its
// parent's execute_tool span.
type spans struct {
	t       *Tracer
	session string
	// parent is the context the next run starts under (nil: a root span).
	parent context.Context
	// prompt is the text that starts the next run, with content on.
	prompt string
	// abortSince is when the abort the next agent_abort tells was taken
	// up; zero when unknown (a sub-agent's, told through its parent).
	abortSince time.Time

	run     trace.Span
	ctx     context.Context // the run's span in its context
	model   string          // of the request in flight
	chat    trace.Span
	compact trace.Span
	tools   map[string]trace.Span // by call id
	sub     map[string]*spans     // sub-agents, by call id
}

// event turns one event into span work.
func (s *spans) event(ev *eventsv1.Event) {
	ts := time.Unix(0, ev.TsUnixNano)
	switch p := ev.Payload.(type) {
	case *eventsv1.Event_PromptReceived:
		if s.t.content {
			s.prompt = p.PromptReceived.Text
		}
	case *eventsv1.Event_PromptRejected:
		s.parent, s.prompt = nil, ""
	case *eventsv1.Event_AgentStart:
		s.startRun(p.AgentStart, ts)
	case *eventsv1.Event_AgentEnd:
		s.endRun(p.AgentEnd, ts)
	case *eventsv1.Event_AgentAbort:
		s.abort(p.AgentAbort, ts)
	case *eventsv1.Event_SteeringReceived:
		s.steer(p.SteeringReceived, ts)
	case *eventsv1.Event_RequestStart:
		s.startChat(p.RequestStart, ts)
	case *eventsv1.Event_ResponseComplete:
		s.endChat(p.ResponseComplete, ts)
	case *eventsv1.Event_StreamError:
		if s.chat != nil {
			s.chat.SetAttributes(ErrorType.String("stream_error"))
			s.chat.SetStatus(codes.Error, p.StreamError.Error)
			s.chat.End(trace.WithTimestamp(ts))
			s.chat = nil
		}
	case *eventsv1.Event_TurnEnd:
		s.endChatCut(ts)
	case *eventsv1.Event_ToolExecutionStart:
		s.startTool(p.ToolExecutionStart, ts)
	case *eventsv1.Event_ToolKilled:
		if sp := s.tools[p.ToolKilled.CallId]; sp != nil {
			sp.AddEvent(EventKilled, trace.WithTimestamp(ts), trace.WithAttributes(Reason.String(p.ToolKilled.Reason)))
		}
	case *eventsv1.Event_ToolSkippedForSteering:
		if sp := s.tools[p.ToolSkippedForSteering.CallId]; sp != nil {
			sp.AddEvent(EventSkipped, trace.WithTimestamp(ts))
		}
	case *eventsv1.Event_ToolExecutionEnd:
		s.endTool(p.ToolExecutionEnd, ts)
	case *eventsv1.Event_CompactStart:
		s.compact = s.start(SpanCompact, ts, trace.WithAttributes(ConversationID.String(s.session)))
	case *eventsv1.Event_CompactEnd:
		if s.compact != nil {
			s.compact.SetAttributes(Removed.Int64(int64(p.CompactEnd.RemovedCount)))
			s.compact.End(trace.WithTimestamp(ts))
			s.compact = nil
		}
	case *eventsv1.Event_SubAgentEvent:
		s.subEvent(p.SubAgentEvent)
	}
}

// start starts a span under the run (or, outside a run, under the
// session's parent).
func (s *spans) start(name string, ts time.Time, opts ...trace.SpanStartOption) trace.Span {
	ctx := s.ctx
	if ctx == nil {
		ctx = s.parentCtx()
	}
	_, sp := s.t.tracer.Start(ctx, name, append(opts, trace.WithTimestamp(ts))...)
	return sp
}

func (s *spans) parentCtx() context.Context {
	if s.parent != nil {
		return s.parent
	}
	return context.Background()
}

func (s *spans) startRun(m *eventsv1.AgentStart, ts time.Time) {
	if s.run != nil { // a run never told ended: end it here rather than leak it
		s.endAll(ts)
		s.run.End(trace.WithTimestamp(ts))
	}
	attrs := []attribute.KeyValue{OperationName.String(OpInvokeAgent), ConversationID.String(s.session), RunID.String(m.RunId)}
	if s.prompt != "" {
		attrs = append(attrs, InputMessages.String(messagesJSON("user", s.prompt)))
	}
	s.ctx, s.run = s.t.tracer.Start(s.parentCtx(), OpInvokeAgent, trace.WithTimestamp(ts), trace.WithAttributes(attrs...))
	s.parent, s.prompt = nil, ""
}

func (s *spans) endRun(m *eventsv1.AgentEnd, ts time.Time) {
	if s.run == nil {
		return
	}
	s.endAll(ts)
	u := m.GetUsage()
	s.run.SetAttributes(EndReason.String(m.Reason), InputTokens.Int64(u.GetInputTokens()), OutputTokens.Int64(u.GetOutputTokens()))
	if m.Reason == "error" {
		s.run.SetAttributes(ErrorType.String("error"))
		s.run.SetStatus(codes.Error, "run ended with an error")
	}
	s.run.End(trace.WithTimestamp(ts))
	s.run, s.ctx = nil, nil
}

// endAll ends what the run left open: a request an abort cut, tools and
// sub-agents that never told their end, a compaction.
func (s *spans) endAll(ts time.Time) {
	s.endChatCut(ts)
	for id, sp := range s.tools {
		sp.End(trace.WithTimestamp(ts))
		delete(s.tools, id)
	}
	for id, c := range s.sub {
		c.endAll(ts)
		if c.run != nil {
			c.run.End(trace.WithTimestamp(ts))
		}
		delete(s.sub, id)
	}
	if s.compact != nil {
		s.compact.End(trace.WithTimestamp(ts))
		s.compact = nil
	}
}

// abort records an abort as an event of the run, at the time it was
// delivered to subscribers, with how long that took after the abort was
// taken up (as tack_abort_delivery_seconds measures it).
func (s *spans) abort(m *eventsv1.AgentAbort, ts time.Time) {
	since := s.abortSince
	s.abortSince = time.Time{}
	if s.run == nil {
		return
	}
	attrs := []attribute.KeyValue{Reason.String(m.Reason)}
	if !since.IsZero() {
		attrs = append(attrs, AbortDelivery.Float64(time.Since(since).Seconds()))
	}
	s.run.AddEvent(EventAbort, trace.WithTimestamp(ts), trace.WithAttributes(attrs...))
}

func (s *spans) steer(m *eventsv1.SteeringReceived, ts time.Time) {
	if s.run == nil {
		return
	}
	attrs := []attribute.KeyValue{SteerRef.String(m.Ref), SteerStatus.String(m.Status)}
	if s.t.content {
		attrs = append(attrs, SteerText.String(m.Text))
	}
	s.run.AddEvent(EventSteer, trace.WithTimestamp(ts), trace.WithAttributes(attrs...))
}

func (s *spans) startChat(m *eventsv1.RequestStart, ts time.Time) {
	if s.run == nil {
		return
	}
	s.endChatCut(ts)
	s.model = m.Model
	s.chat = s.start(OpChat+" "+m.Model, ts, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		OperationName.String(OpChat), ConversationID.String(s.session), RequestModel.String(m.Model), Turn.Int(int(m.Turn))))
}

func (s *spans) endChat(m *eventsv1.ResponseComplete, ts time.Time) {
	if s.chat == nil {
		return
	}
	u := m.GetUsage()
	s.chat.SetAttributes(ResponseModel.String(s.model), FinishReasons.StringSlice([]string{m.StopReason}),
		InputTokens.Int64(u.GetInputTokens()), OutputTokens.Int64(u.GetOutputTokens()))
	if s.t.content {
		s.chat.SetAttributes(OutputMessages.String(messagesJSON("assistant", m.GetMessage().GetContent())))
	}
	s.chat.End(trace.WithTimestamp(ts))
	s.chat = nil
}

// endChatCut ends a request that got no response (an abort cut it).
func (s *spans) endChatCut(ts time.Time) {
	if s.chat != nil {
		s.chat.SetAttributes(ResponseModel.String(s.model), FinishReasons.StringSlice([]string{"interrupted"}))
		s.chat.End(trace.WithTimestamp(ts))
		s.chat = nil
	}
}

func (s *spans) startTool(m *eventsv1.ToolExecutionStart, ts time.Time) {
	if s.run == nil {
		return
	}
	attrs := []attribute.KeyValue{OperationName.String(OpExecuteTool), ToolName.String(m.Name), ToolCallID.String(m.CallId)}
	if s.t.content {
		attrs = append(attrs, ToolArguments.String(string(m.GetArgs().GetJson())))
	}
	if s.tools == nil {
		s.tools = map[string]trace.Span{}
	}
	s.tools[m.CallId] = s.start(OpExecuteTool+" "+m.Name, ts, trace.WithAttributes(attrs...))
}

func (s *spans) endTool(m *eventsv1.ToolExecutionEnd, ts time.Time) {
	sp := s.tools[m.CallId]
	if sp == nil {
		return
	}
	delete(s.tools, m.CallId)
	if c := s.sub[m.CallId]; c != nil {
		c.endAll(ts)
		if c.run != nil {
			c.run.End(trace.WithTimestamp(ts))
		}
		delete(s.sub, m.CallId)
	}
	if s.t.content {
		sp.SetAttributes(ToolResult.String(m.Result))
	}
	if !m.Ok {
		sp.SetAttributes(ErrorType.String("tool_error"))
		sp.SetStatus(codes.Error, "tool call failed")
	}
	sp.End(trace.WithTimestamp(ts))
}

// subEvent builds a sub-agent's spans under the execute_tool span of the
// call that runs it.
func (s *spans) subEvent(m *eventsv1.SubAgentEvent) {
	c := s.sub[m.CallId]
	if c == nil {
		sp := s.tools[m.CallId]
		if sp == nil {
			return
		}
		sp.SetAttributes(ChildSession.String(m.ChildSession))
		c = &spans{t: s.t, session: m.ChildSession, parent: trace.ContextWithSpan(context.Background(), sp)}
		if s.sub == nil {
			s.sub = map[string]*spans{}
		}
		s.sub[m.CallId] = c
	}
	c.event(m.GetEvent())
}

// messagesJSON is one message in the conventions' JSON form of
// gen_ai.input.messages and gen_ai.output.messages.
func messagesJSON(role, text string) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	type message struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	b, _ := json.Marshal([]message{{Role: role, Parts: []part{{Type: "text", Content: text}}}}) // strings only: cannot fail
	return string(b)
}
