// Package otlp sends the Prometheus metrics of package metrics over OTLP
// as OpenTelemetry metrics, with the same names, labels (as attributes)
// and buckets: the registry is read through the OpenTelemetry Prometheus
// bridge (go.opentelemetry.io/contrib/bridges/prometheus) by a periodic
// reader of an SDK MeterProvider, so there is one definition of each
// metric for both.
//
// # Usage
//
//	m := metrics.New()
//	mp, err := otlp.FromEnv(ctx, m.Gatherer()) // nil when OTLP is off
//	...
//	defer mp.Shutdown(ctx)
//
// # Testing
//
// The test exports to an OTLP/HTTP receiver in the test and decodes what
// it got.
package otlp
