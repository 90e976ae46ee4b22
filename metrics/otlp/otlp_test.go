package otlp_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/otlptest"
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/metrics/otlp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestFromEnvSendsTheMetrics: with OTEL_EXPORTER_OTLP_ENDPOINT set, the
// provider sends Tack's metrics as OTLP protobuf over HTTP to
// /v1/metrics, under their Prometheus names, with what a run counted.
func TestFromEnvSendsTheMetrics(t *testing.T) {
	col := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "")
	ctx := t.Context()
	m := metrics.New()
	mp, err := otlp.FromEnv(ctx, m.Gatherer())
	if err != nil || mp == nil {
		t.Fatalf("FromEnv: %v, %v", mp, err)
	}
	rt, err := tack.New(tack.WithMetrics(m))
	if err != nil {
		t.Fatal(err)
	}
	s, err := rt.Spawn(tack.SessionConfig{ID: "s", Script: json.RawMessage(`{"turns":[{"text":"Hi.","usage":{"input_tokens":5,"output_tokens":2}}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	<-sub.C
	_ = sub.Close()
	rt.Close()
	if err := mp.Shutdown(ctx); err != nil { // sends the metrics a last time
		t.Fatal(err)
	}
	var names []string
	sums := map[string]float64{}
	for _, mt := range col.Metrics() {
		if !strings.HasPrefix(mt.Name, "tack_") || slices.Contains(names, mt.Name) {
			continue
		}
		names = append(names, mt.Name)
		for _, dp := range mt.GetSum().GetDataPoints() {
			sums[mt.Name] += dp.GetAsDouble()
		}
	}
	slices.Sort(names)
	// Those with labels known in advance, and the rest once counted (no
	// tool ran, no HTTP request was served).
	want := []string{"tack_abort_delivery_seconds", "tack_runs_ended_total", "tack_runs_started_total", "tack_sessions",
		"tack_store_write_duration_seconds", "tack_store_write_failures_total", "tack_stream_subscribers", "tack_tokens_total"}
	if !slices.Equal(names, want) {
		t.Errorf("metrics %q, want %q", names, want)
	}
	if sums["tack_runs_started_total"] != 1 || sums["tack_runs_ended_total"] != 1 || sums["tack_tokens_total"] != 7 {
		t.Errorf("runs started %v, ended %v, tokens %v; want 1, 1, 7", sums["tack_runs_started_total"], sums["tack_runs_ended_total"], sums["tack_tokens_total"])
	}
}
