package tracing

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tack-run/tack/actors"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// ScopeName is the instrumentation scope of Tack's spans.
const ScopeName = "github.com/tack-run/tack"

// Attribute keys of the GenAI semantic conventions, and Tack's own.
const (
	OperationName  = attribute.Key("gen_ai.operation.name")
	ConversationID = attribute.Key("gen_ai.conversation.id")
	RequestModel   = attribute.Key("gen_ai.request.model")
	ResponseModel  = attribute.Key("gen_ai.response.model")
	FinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	InputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	OutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	ToolName       = attribute.Key("gen_ai.tool.name")
	ToolCallID     = attribute.Key("gen_ai.tool.call.id")
	ToolArguments  = attribute.Key("gen_ai.tool.call.arguments")
	ToolResult     = attribute.Key("gen_ai.tool.call.result")
	InputMessages  = attribute.Key("gen_ai.input.messages")
	OutputMessages = attribute.Key("gen_ai.output.messages")
	ErrorType      = attribute.Key("error.type")

	AbortDelivery = attribute.Key("tack.abort.delivery_seconds")
	RunID         = attribute.Key("tack.run.id")
	EndReason     = attribute.Key("tack.run.end_reason")
	Turn          = attribute.Key("tack.turn")
	Reason        = attribute.Key("tack.reason")
	SteerRef      = attribute.Key("tack.steer.ref")
	SteerStatus   = attribute.Key("tack.steer.status")
	SteerText     = attribute.Key("tack.steer.text")
	Removed       = attribute.Key("tack.compact.removed")
	ChildSession  = attribute.Key("tack.subagent.session")
)

// Operation names (gen_ai.operation.name) and Tack's own span and event
// names.
const (
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
	SpanCompact   = "compact"
	EventSteer    = "steer"
	EventAbort    = "abort"
	EventKilled   = "tool_killed"
	EventSkipped  = "tool_skipped_for_steering"
)

// Option configures a Tracer.
type Option func(*Tracer)

// WithContent puts message content on spans when on: the prompt
// (gen_ai.input.messages of invoke_agent), the model's answer
// (gen_ai.output.messages of chat), tool arguments and results, steering
// text. Off by default.
func WithContent(on bool) Option { return func(t *Tracer) { t.content = on } }

// Tracer makes the spans of sessions from their events; it implements
// actors.Tracer.
type Tracer struct {
	tracer  trace.Tracer
	content bool
}

// New returns a Tracer whose spans tp makes.
func New(tp trace.TracerProvider, opts ...Option) *Tracer {
	t := &Tracer{tracer: tp.Tracer(ScopeName)}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Session returns the watcher of session id.
func (t *Tracer) Session(id string) actors.SessionTracer {
	return &watcher{spans: spans{t: t, session: id}}
}

// watcher is the SessionTracer of one session.
type watcher struct {
	spans spans
}

// Deliver builds spans from ev.
func (w *watcher) Deliver(ev *eventsv1.Event) { w.spans.event(ev) }

// Parent makes the next run a child of traceparent; a value that is not
// a valid trace context is ignored.
func (w *watcher) Parent(traceparent string) {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	if trace.SpanContextFromContext(ctx).IsValid() {
		w.spans.parent = ctx
	}
}

// Abort notes when the abort that the next agent_abort tells was taken up.
func (w *watcher) Abort(since time.Time) { w.spans.abortSince = since }

// Traceparent is the W3C traceparent of the span ctx carries, or "" when
// it carries none. tack.Session.Send puts it on the prompt commands it
// sends, so a run started from a traced request is traced under it, in
// this process or in another one over protoactor remote.
func Traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// Extract returns ctx with the remote span context of the W3C trace
// context headers of h (traceparent, tracestate), or ctx itself when h has
// none.
func Extract(ctx context.Context, h http.Header) context.Context {
	if h.Get("traceparent") == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(h))
}
