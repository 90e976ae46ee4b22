// Package otlptest is an OTLP/HTTP receiver for tests: a server on
// loopback that takes the protobuf export requests of traces (POST
// /v1/traces) and metrics (POST /v1/metrics), answers them as a collector
// would, and keeps them for the test to read. Anything else fails the
// test and is answered 400.
package otlptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Collector is a running receiver; set OTEL_EXPORTER_OTLP_ENDPOINT to URL.
type Collector struct {
	// URL is the receiver's base URL, http://127.0.0.1:PORT.
	URL string

	t       testing.TB
	mu      sync.Mutex
	traces  []*collectortrace.ExportTraceServiceRequest
	metrics []*collectormetrics.ExportMetricsServiceRequest
}

// Start starts a receiver, closed when the test ends.
func Start(t testing.TB) *Collector {
	c := &Collector{t: t}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// ServeHTTP takes one export request.
func (c *Collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req, resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		req, resp = &collectortrace.ExportTraceServiceRequest{}, &collectortrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		req, resp = &collectormetrics.ExportMetricsServiceRequest{}, &collectormetrics.ExportMetricsServiceResponse{}
	}
	if err == nil && req != nil {
		err = proto.Unmarshal(body, req)
	}
	if req == nil || err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
		c.t.Errorf("otlptest: %s %s (%s): %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err)
		http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	switch m := req.(type) {
	case *collectortrace.ExportTraceServiceRequest:
		c.traces = append(c.traces, m)
	case *collectormetrics.ExportMetricsServiceRequest:
		c.metrics = append(c.metrics, m)
	}
	c.mu.Unlock()
	b, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// ResourceSpans are the spans received so far, by resource, in the order
// they came.
func (c *Collector) ResourceSpans() []*tracepb.ResourceSpans {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.ResourceSpans
	for _, r := range c.traces {
		out = append(out, r.ResourceSpans...)
	}
	return out
}

// Spans are the spans received so far, in the order they came.
func (c *Collector) Spans() []*tracepb.Span {
	var out []*tracepb.Span
	for _, rs := range c.ResourceSpans() {
		for _, ss := range rs.ScopeSpans {
			out = append(out, ss.Spans...)
		}
	}
	return out
}

// Metrics are the metrics received so far, in the order they came (a
// cumulative metric appears once per export).
func (c *Collector) Metrics() []*metricspb.Metric {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*metricspb.Metric
	for _, r := range c.metrics {
		for _, rm := range r.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				out = append(out, sm.Metrics...)
			}
		}
	}
	return out
}
