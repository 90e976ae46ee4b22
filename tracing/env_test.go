package tracing_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/otlptest"
	"github.com/tack-run/tack/tracing"
)

// TestFromEnvExportsOverOTLPHTTP: with OTEL_EXPORTER_OTLP_ENDPOINT set,
// FromEnv's provider sends a run's spans as OTLP protobuf over HTTP to
// /v1/traces, with the service name of OTEL_SERVICE_NAME.
func TestFromEnvExportsOverOTLPHTTP(t *testing.T) {
	col := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "tack-test")
	ctx := t.Context()
	tp, err := tracing.FromEnv(ctx)
	if err != nil || tp == nil {
		t.Fatalf("FromEnv: %v, %v", tp, err)
	}
	rt, err := tack.New(tack.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	s, err := rt.Spawn(tack.SessionConfig{ID: "s", Script: json.RawMessage(`{"turns":[{"text":"Hi."}]}`)})
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
	if err := tp.Shutdown(ctx); err != nil { // sends the batch
		t.Fatal(err)
	}
	var names, services []string
	for _, rs := range col.ResourceSpans() {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				services = append(services, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			if ss.GetScope().GetName() != tracing.ScopeName {
				t.Errorf("scope %q", ss.GetScope().GetName())
			}
			for _, sp := range ss.Spans {
				names = append(names, sp.Name)
			}
		}
	}
	if !slices.Equal(names, []string{"chat script:inline", "invoke_agent"}) || !slices.Equal(services, []string{"tack-test"}) {
		t.Errorf("received spans %q of services %q, want [chat script:inline invoke_agent] of [tack-test]", names, services)
	}
}

// TestFromEnvOff: without an OTLP endpoint there is no provider; a
// protocol it does not know is an error naming it.
func TestFromEnvOff(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	if tp, err := tracing.FromEnv(t.Context()); tp != nil || err != nil {
		t.Fatalf("FromEnv without endpoint: %v, %v", tp, err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	if _, err := tracing.FromEnv(t.Context()); err == nil || err.Error() != `tracing: OTEL_EXPORTER_OTLP_PROTOCOL is http/protobuf or grpc, not "http/json"` {
		t.Fatalf("FromEnv with http/json: %v", err)
	}
}
