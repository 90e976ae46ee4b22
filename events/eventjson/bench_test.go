package eventjson_test

import (
	"testing"

	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

func BenchmarkAppendJSON(b *testing.B) {
	cases := []struct {
		name string
		ev   *eventsv1.Event
	}{
		{"message_delta", stamped(12345, &eventsv1.MessageDelta{Delta: "Hello, wor"})},
		{"tool_execution_start", stamped(14, &eventsv1.ToolExecutionStart{Name: "sleep", CallId: "c-1", Args: raw(`{"ms":500}`)})},
		{"message_committed", stamped(20, &eventsv1.MessageCommitted{Index: 3, Message: &eventsv1.Message{
			Role: "assistant", Content: "Let me look.",
			ToolCalls: []*eventsv1.ToolCall{{Id: "c-1", Name: "sleep", Args: raw(`{"ms":10}`)}},
		}})},
		{"token_usage", stamped(21, &eventsv1.TokenUsage{ContextUsed: 900, ContextWindow: ptr[int64](8000), ContextPercent: ptr(11.25), SessionTotalTokens: 1540, Model: "m", CostUsd: 0.0012})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			buf := eventjson.Append(nil, c.ev)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for range b.N {
				buf = eventjson.Append(buf[:0], c.ev)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func ptr[T any](v T) *T { return &v }
