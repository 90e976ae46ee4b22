package remote_test

import (
	"encoding/hex"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/otlptest"
)

// TestRemotePromptTraceparent: a tack node started with
// OTEL_EXPORTER_OTLP_ENDPOINT sends its spans over OTLP/HTTP, and the run
// a remote prompt starts is traced under the traceparent the prompt
// message carries across protoactor remote.
func TestRemotePromptTraceparent(t *testing.T) {
	col := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
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
	for _, sp := range col.Spans() {
		if sp.Name == "invoke_agent" {
			runs = append(runs, hex.EncodeToString(sp.TraceId)+"/"+hex.EncodeToString(sp.ParentSpanId))
		}
	}
	if len(runs) != 1 || runs[0] != traceID+"/"+spanID {
		t.Fatalf("runs (trace/parent) %v, want [%s/%s]", runs, traceID, spanID)
	}
}
