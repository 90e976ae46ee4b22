// Package tracing traces what Tack sessions do with OpenTelemetry, after
// the GenAI semantic conventions: a span per run (invoke_agent), per model
// request (chat {model}), per tool call (execute_tool {name}), per
// compaction (compact) and, for a sub-agent, its run nested under the
// parent's execute_tool subagent span. Steering and aborts are span
// events of the run.
//
// # Usage
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
//	rt, err := tack.New(tack.WithTracerProvider(tp))
//
// tack.WithTracerProvider builds a Tracer with New. Spans are built from
// each session's event stream (an events.Stream tap), and take their
// start and end times from the events' timestamps. Message content
// (prompts, answers, tool arguments and results, steering text) is left
// out unless WithContent says otherwise, as the conventions advise.
//
// A run's parent comes from the traceparent of the prompt command that
// started it (Parent; tack serve takes it from the HTTP request's
// traceparent header, Session.Prompt from its context).
//
// # Concurrency
//
// A Tracer may serve many sessions at once. What Session returns is used
// by one session actor only, on its goroutine, and holds no lock.
//
// # Testing
//
// The tests run scripted sessions with the SDK's in-memory exporter
// (sdk/trace/tracetest) and assert the span tree and its attributes, and
// export over OTLP/HTTP to a receiver in the test.
package tracing
