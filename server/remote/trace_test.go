package remote_test

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// TestRemotePromptTraceparent: a tack node started with
// OTEL_EXPORTER_OTLP_ENDPOINT sends its spans over OTLP/HTTP, and the run
// a remote prompt starts is traced under the traceparent the prompt
// message carries across protoactor remote.
func TestRemotePromptTraceparent(t *testing.T) {
	got := make(chan *collectortrace.ExportTraceServiceRequest, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		req := &collectortrace.ExportTraceServiceRequest{}
		if err == nil {
			err = proto.Unmarshal(body, req)
		}
		if r.URL.Path != "/v1/traces" || err != nil {
			t.Errorf("%s %s: %v", r.Method, r.URL.Path, err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		got <- req
		b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	n := startNode(t, "--store", "memory")
	c := newClient(t, n.Addr)
	s := c.create(t, "traced", hello)
	sub := c.subscribe(t, s, 0)
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	c.reply(t, s, &eventsv1.Prompt{Text: "hi", Traceparent: "00-" + traceID + "-" + spanID + "-01"})
	sub.until(t, "agent_end")
	n.Stop(t) // sends the batched spans on its way out
	var runs []string
	for len(got) > 0 {
		for _, rs := range (<-got).ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					if sp.Name == "invoke_agent" {
						runs = append(runs, hex.EncodeToString(sp.TraceId)+"/"+hex.EncodeToString(sp.ParentSpanId))
					}
				}
			}
		}
	}
	if len(runs) != 1 || runs[0] != traceID+"/"+spanID {
		t.Fatalf("runs (trace/parent) %v, want [%s/%s]", runs, traceID, spanID)
	}
}
