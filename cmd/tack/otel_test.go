package main

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/internal/otlptest"
)

// TestServeOTLP: tack serve with OTEL_EXPORTER_OTLP_ENDPOINT and
// --trace-content sends the spans of a prompt made under a traceparent
// header, with the prompt on the run's span, and its metrics, to an
// OTLP/HTTP collector; it sends what it still holds on SIGTERM.
func TestServeOTLP(t *testing.T) {
	bin := buildTack(t)
	col := otlptest.Start(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--store", "memory", "--trace-content")
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+col.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_METRIC_EXPORT_INTERVAL=600000")
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	call := caller(t, serveProcess(t, cmd), http.Header{"Traceparent": {"00-" + traceID + "-" + spanID + "-01"}})
	call("POST", "/v1/sessions", `{"session":"x","script":{"turns":[{"text":"hi"}]}}`, 201)
	call("POST", "/v1/sessions/x/prompt", `{"text":"hello"}`, 200)
	awaitMessages(t, call, "x", `"content":"hi"`, 10*time.Second)
	eventually.Within(t, 10*time.Second, func() error {
		if st := call("GET", "/v1/sessions/x", "", 200); !strings.Contains(st, `"state":"idle","model"`) {
			return fmt.Errorf("the session is not idle: %s", st)
		}
		return nil
	})
	http.DefaultClient.CloseIdleConnections()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tack serve after SIGTERM: %v", err)
	}
	var spans []string // name trace/parent [content]
	for _, sp := range col.Spans() {
		line := sp.Name + " " + hex.EncodeToString(sp.TraceId) + "/" + hex.EncodeToString(sp.ParentSpanId)
		for _, a := range sp.Attributes {
			if a.Key == "gen_ai.input.messages" {
				line += " " + a.GetValue().GetStringValue()
			}
		}
		spans = append(spans, line)
	}
	metrics := map[string]float64{} // the tack_ counters' sums in the last export (they are cumulative)
	for _, m := range col.Metrics() {
		if strings.HasPrefix(m.Name, "tack_") && m.GetSum() != nil {
			metrics[m.Name] = 0
			for _, dp := range m.GetSum().GetDataPoints() {
				metrics[m.Name] += dp.GetAsDouble()
			}
		}
	}
	slices.Sort(spans)
	run := slices.IndexFunc(spans, func(s string) bool { return strings.HasPrefix(s, "invoke_agent ") })
	if want := `invoke_agent ` + traceID + "/" + spanID + ` [{"role":"user","parts":[{"type":"text","content":"hello"}]}]`; run < 0 || spans[run] != want {
		t.Errorf("spans %q, want among them %q", spans, want)
	}
	if metrics["tack_runs_started_total"] != 1 || metrics["tack_http_requests_total"] < 3 {
		t.Errorf("metrics %v, want tack_runs_started_total 1 and tack_http_requests_total at least 3", metrics)
	}
}
