package main

import (
	"bufio"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP receiver: it keeps the spans and the metric
// data points it is sent.
type collector struct {
	mu      sync.Mutex
	spans   []string           // name trace/parent [content]
	metrics map[string]float64 // sums of the tack_ counters
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		req := &collectortrace.ExportTraceServiceRequest{}
		if err = proto.Unmarshal(body, req); err == nil {
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, sp := range ss.Spans {
						line := sp.Name + " " + hex.EncodeToString(sp.TraceId) + "/" + hex.EncodeToString(sp.ParentSpanId)
						for _, a := range sp.Attributes {
							if a.Key == "gen_ai.input.messages" {
								line += " " + a.GetValue().GetStringValue()
							}
						}
						c.spans = append(c.spans, line)
					}
				}
			}
		}
		resp = &collectortrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		req := &collectormetrics.ExportMetricsServiceRequest{}
		if err = proto.Unmarshal(body, req); err == nil {
			for _, rm := range req.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						if strings.HasPrefix(m.Name, "tack_") && m.GetSum() != nil {
							c.metrics[m.Name] = 0 // cumulative: the last export counts
							for _, dp := range m.GetSum().GetDataPoints() {
								c.metrics[m.Name] += dp.GetAsDouble()
							}
						}
					}
				}
			}
		}
		resp = &collectormetrics.ExportMetricsServiceResponse{}
	default:
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		http.Error(w, r.URL.Path+": "+err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// TestServeOTLP: tack serve with OTEL_EXPORTER_OTLP_ENDPOINT and
// --trace-content sends the spans of a prompt made under a traceparent
// header, with the prompt on the run's span, and its metrics, to an
// OTLP/HTTP collector; it sends what it still holds on SIGTERM.
func TestServeOTLP(t *testing.T) {
	bin := buildTack(t)
	col := &collector{metrics: map[string]float64{}}
	srv := httptest.NewServer(col)
	defer srv.Close()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--store", "memory", "--trace-content")
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_METRIC_EXPORT_INTERVAL=600000")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "tack serve: listening on ")
	if err != nil || !ok {
		t.Fatalf("first stderr line %q, %v", line, err)
	}
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	call := func(method, path, body string, status int) string {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("traceparent", "00-"+traceID+"-"+spanID+"-01")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != status {
			t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, b, status)
		}
		return string(b)
	}
	call("POST", "/v1/sessions", `{"session":"x","script":{"turns":[{"text":"hi"}]}}`, 201)
	call("POST", "/v1/sessions/x/prompt", `{"text":"hello"}`, 200)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(call("GET", "/v1/sessions/x", "", 200), `"state":"idle","model"`) || !strings.Contains(call("GET", "/v1/sessions/x/messages", "", 200), `"content":"hi"`) {
		if time.Now().After(deadline) {
			t.Fatal("no answer")
		}
		time.Sleep(10 * time.Millisecond) // polling
	}
	http.DefaultClient.CloseIdleConnections()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tack serve after SIGTERM: %v", err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	slices.Sort(col.spans)
	run := slices.IndexFunc(col.spans, func(s string) bool { return strings.HasPrefix(s, "invoke_agent ") })
	if want := `invoke_agent ` + traceID + "/" + spanID + ` [{"role":"user","parts":[{"type":"text","content":"hello"}]}]`; run < 0 || col.spans[run] != want {
		t.Errorf("spans %q, want among them %q", col.spans, want)
	}
	if col.metrics["tack_runs_started_total"] != 1 || col.metrics["tack_http_requests_total"] < 3 {
		t.Errorf("metrics %v, want tack_runs_started_total 1 and tack_http_requests_total at least 3", col.metrics)
	}
}
