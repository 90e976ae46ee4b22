package tack_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tack-run/tack"
)

// BenchmarkTurnTracing is BenchmarkTurnOverhead's history=0 run without
// and with tracing (WithTracerProvider, the SDK's batch processor in front
// of an exporter that drops the spans): the difference is what making the
// spans costs per turn. Without a provider no session has a tracer, so
// tracing=off is the runtime as it is without tracing.
func BenchmarkTurnTracing(b *testing.B) {
	defer settle(b)
	b.Run("tracing=off", func(b *testing.B) { benchTurns(b) })
	b.Run("tracing=on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		benchTurns(b, tack.WithTracerProvider(tp))
	})
}
