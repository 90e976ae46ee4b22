package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// TestReadStream checks what the serve-sse clients accept of an event
// stream: events whose ids follow one another and whose data agree with
// their SSE fields, and nothing lost.
func TestReadStream(t *testing.T) {
	ev := func(id, typ, data string) string {
		return "id: " + id + "\nevent: " + typ + "\ndata: " + data + "\n\n"
	}
	delta := func(seq string) string {
		return ev(seq, "message_delta", `{"type":"message_delta","session":"s","seq":`+seq+`,"delta":"x"}`)
	}
	end := ev("4", "agent_end", `{"type":"agent_end","session":"s","seq":4,"reason":"aborted"}`)
	tests := []struct {
		name, stream string
		want         []string // types, then the reason of agent_end
		err          string
	}{
		{"in order, with a keepalive", delta("2") + ": keepalive\n\n" + delta("3") + end,
			[]string{"message_delta", "message_delta", "agent_end aborted"}, ""},
		{"a gap", delta("2") + end, []string{"message_delta"}, "after id 2"},
		{"a duplicate", delta("2") + delta("2"), []string{"message_delta"}, "after id 2"},
		{"data of another type", ev("2", "message_delta", `{"type":"agent_end","seq":2}`), nil, "event message_delta id"},
		{"data of another seq", ev("2", "message_delta", `{"type":"message_delta","seq":3}`), nil, "event message_delta id"},
		{"events lost", delta("2") + "event: events_lost\ndata: {\"type\":\"events_lost\",\"from\":3,\"to\":9}\n\n",
			[]string{"message_delta"}, "lost events"},
		{"data that is not JSON", ev("2", "message_delta", "{"), nil, "event message_delta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := readStream(io.NopCloser(strings.NewReader(tt.stream)), func(e event) {
				s := e.Type
				if e.Reason != "" {
					s += " " + e.Reason
				}
				got = append(got, s)
			})
			if !slices.Equal(got, tt.want) {
				t.Errorf("events %q, want %q", got, tt.want)
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v, want one holding %q", err, tt.err)
			}
		})
	}
}
