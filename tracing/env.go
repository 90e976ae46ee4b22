package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/tack-run/tack/internal/otelenv"
)

// FromEnv returns a TracerProvider that exports spans over OTLP as the
// standard OTEL_* environment variables say, or nil when neither
// OTEL_EXPORTER_OTLP_ENDPOINT nor OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
// set (then nothing is traced). OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL picks "http/protobuf" (the default) or
// "grpc"; the exporters read the endpoint, headers, timeout, compression
// and TLS variables themselves. The service is "tack" unless
// OTEL_SERVICE_NAME says otherwise. The caller shuts the provider down,
// which sends what is still batched.
func FromEnv(ctx context.Context) (*sdktrace.TracerProvider, error) {
	if !otelenv.On(otelenv.Traces) {
		return nil, nil
	}
	protocol, err := otelenv.Protocol(otelenv.Traces)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	var exp *otlptrace.Exporter
	if protocol == otelenv.GRPC {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := otelenv.Resource()
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
