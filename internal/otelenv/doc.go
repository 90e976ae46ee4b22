// Package otelenv reads the standard OTEL_* environment variables that
// say whether and how to export over OTLP, the same way for traces
// (package tracing) and metrics (package metrics/otlp). The exporters
// read the rest (endpoint, headers, timeout, TLS) themselves.
package otelenv
