package otlp

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	bridge "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/tack-run/tack/internal/otelenv"
)

// FromEnv returns a MeterProvider that sends what g gathers over OTLP as
// the standard OTEL_* environment variables say, or nil when neither
// OTEL_EXPORTER_OTLP_ENDPOINT nor OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is
// set. OTEL_EXPORTER_OTLP_METRICS_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL
// picks "http/protobuf" (the default) or "grpc"; OTEL_METRIC_EXPORT_INTERVAL
// sets how often (default 60 s). The caller shuts the provider down, which
// sends the metrics a last time.
func FromEnv(ctx context.Context, g prometheus.Gatherer) (*sdkmetric.MeterProvider, error) {
	if !otelenv.On(otelenv.Metrics) {
		return nil, nil
	}
	protocol, err := otelenv.Protocol(otelenv.Metrics)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	var exp sdkmetric.Exporter
	if protocol == otelenv.GRPC {
		exp, err = otlpmetricgrpc.New(ctx)
	} else {
		exp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("metrics: OTLP exporter: %w", err)
	}
	res, err := otelenv.Resource()
	if err != nil {
		return nil, fmt.Errorf("metrics: resource: %w", err)
	}
	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithProducer(bridge.NewMetricProducer(bridge.WithGatherer(g))))
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res)), nil
}
