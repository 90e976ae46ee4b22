// Package metrics keeps the runtime's Prometheus metrics: sessions by
// state, runs started and ended, abort delivery latency, tokens, tool
// durations, store writes, HTTP requests and live stream subscribers. The
// names, types and labels are listed in docs/metrics.md.
//
// # Usage
//
// New makes a Metrics with a registry of its own (never Prometheus's
// global one), so several runtimes, and tests, in one process keep apart.
// The runtime takes it with tack.WithMetrics and tells it what sessions do
// through the actors.Observer interface, which *Metrics implements; an
// HTTP server wraps each route's handler with Instrument, counts its live
// streams with Subscriber, and serves Handler at GET /metrics:
//
//	m := metrics.New()
//	rt, err := tack.New(tack.WithMetrics(m))
//	...
//	mux.Handle("GET /metrics", m.Handler())
//	mux.Handle("GET /v1/sessions/{id}", m.Instrument("GET /v1/sessions/{id}", h))
//
// # Concurrency
//
// Every method is safe for concurrent use. The Observer methods run on the
// sessions' hot paths: they only add to counters, gauges and histograms
// whose label values were looked up when the Metrics was made, except the
// tool name and a plugin's own run end reason, looked up per call.
//
// # Testing
//
// Tests scrape Handler with net/http/httptest and parse the text format
// with github.com/prometheus/common/expfmt.
package metrics
