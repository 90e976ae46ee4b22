// Package metricstest reads metrics the way Prometheus does, for tests:
// Scrape serves GET /metrics from a handler (metrics.Metrics.Handler)
// through net/http/httptest, checks that the answer is Prometheus's text
// format, and parses it; Value and Count read one series of what it got,
// failing the test when the series is missing.
//
// # Usage
//
//	got := metricstest.Scrape(t, m.Handler())
//	if n := got.Value("tack_runs_ended_total", "reason", "completed"); n != 1 {
//		t.Errorf("completed runs: %v", n)
//	}
package metricstest
