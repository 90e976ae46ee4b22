package eventjson_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

func TestMarshalJSONReplies(t *testing.T) {
	delta := stamped(3, &eventsv1.MessageDelta{Delta: "x"})
	tests := []struct {
		name string
		m    proto.Message
		want string
	}{
		{"prompt reply", &eventsv1.PromptReply{Queued: true}, `{"queued":true}`},
		{"empty message list", &eventsv1.MessageList{}, `{"messages":[]}`},
		{"marked messages", &eventsv1.MessageList{Messages: []*eventsv1.Message{
			{Role: "user", Content: "old", Compacted: true, RolledBack: true},
			{Role: "user", Content: "s", Summary: true},
		}}, `{"messages":[{"role":"user","content":"old","compacted":true,"rolled_back":true},{"role":"user","content":"s","summary":true}]}`},
		{"images", &eventsv1.MessageList{Messages: []*eventsv1.Message{
			{Role: "user", Content: "look", Images: []*eventsv1.Image{{Url: "https://x/a.png", Detail: "low"}, {Url: "data:image/png;base64,AA=="}}},
		}}, `{"messages":[{"role":"user","content":"look","images":[{"url":"https://x/a.png","detail":"low"},{"url":"data:image/png;base64,AA=="}]}]}`},
		{
			name: "message list as in docs/protocol.md",
			m: &eventsv1.MessageList{Messages: []*eventsv1.Message{
				{Role: "user", Content: "sleep please"},
				{Role: "assistant", Content: "...", ToolCalls: []*eventsv1.ToolCall{{Id: "c-1", Name: "sleep", Args: raw(`{"ms":10}`)}}},
				{Role: "tool", ToolCallId: "c-1", Content: "...", IsError: false},
			}},
			want: `{"messages":[{"role":"user","content":"sleep please"},` +
				`{"role":"assistant","content":"...","tool_calls":[{"id":"c-1","name":"sleep","args":{"ms":10}}]},` +
				`{"role":"tool","tool_call_id":"c-1","content":"...","is_error":false}]}`,
		},
		{
			name: "event list in event form",
			m:    &eventsv1.EventList{Events: []*eventsv1.Event{delta, stamped(0, &eventsv1.EventsLost{From: 1, To: 2})}},
			want: `{"events":[{"type":"message_delta","session":"s1","seq":3,` + tsJSON + `,"delta":"x"},` +
				`{"type":"events_lost","session":"s1","seq":0,` + tsJSON + `,"from":1,"to":2}]}`,
		},
		{
			name: "session list",
			m: &eventsv1.SessionList{Sessions: []*eventsv1.SessionSummary{{Session: "s1", State: "idle", Model: "m", MessageCount: 2,
				Title: "Fix the \"build\"", UpdatedAt: "2026-11-24T10:00:00.123456Z"}}},
			want: `{"sessions":[{"session":"s1","state":"idle","model":"m","message_count":2,"loaded":false,` +
				`"title":"Fix the \"build\"","updated_at":"2026-11-24T10:00:00.123456Z"}],"next":""}`,
		},
		{
			name: "reply writes only the set oneof member",
			m:    &eventsv1.Reply{Data: &eventsv1.Reply_Steer{Steer: &eventsv1.SteerReply{Ref: "st-2"}}},
			want: `{"error":null,"steer":{"ref":"st-2"}}`,
		},
		{
			name: "reply with error",
			m:    &eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: "queue_full", Message: "steering queue holds 3 messages"}},
			want: `{"error":{"code":"queue_full","message":"steering queue holds 3 messages"}}`,
		},
		{"raw json alone", raw(`[1, 2]`), `[1, 2]`},
		{"steer with unset optional", &eventsv1.Steer{Text: "t"}, `{"text":"t","interrupt_tools":null,"images":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := eventjson.Marshal(tt.m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal\n got: %s\nwant: %s", got, tt.want)
			}
			got2, err := eventjson.AppendMessage([]byte("x"), tt.m)
			if err != nil || string(got2) != "x"+tt.want {
				t.Errorf("AppendMessage = %s, %v", got2, err)
			}
		})
	}
}

// encodingJSON returns what encoding/json writes for v without HTML
// escaping: the reference for strings and floats.
func encodingJSON(t testing.TB, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// deltaJSON returns the "delta" value of the JSON form of a message_delta.
func deltaJSON(delta string) string {
	ev := &eventsv1.Event{Payload: &eventsv1.Event_MessageDelta{MessageDelta: &eventsv1.MessageDelta{Delta: delta}}}
	out := string(eventjson.Append(nil, ev))
	_, v, _ := strings.Cut(out, `"delta":`)
	return strings.TrimSuffix(v, "}")
}

func FuzzStringEscaping(f *testing.F) {
	for _, s := range []string{
		"", "plain", "quote\" backslash\\ slash/", "\n\r\t\b\f\x00\x1f\x7f",
		"<script>&amp;</script>", "é ü 日本 🎉", "\u2028\u2029", "bad \xff\xfe utf8 \xc3",
		"truncated \xe6\x97", "\xed\xa0\x80 surrogate",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := deltaJSON(s)
		if want := encodingJSON(t, s); got != want {
			t.Errorf("string %q\n got: %s\nwant: %s", s, got, want)
		}
	})
}

func TestFloatFormatting(t *testing.T) {
	for _, f := range []float64{
		0, 1, -1, 0.1, 11.25, 1e-7, 1.5e-9, 123456789, 1e20, 1e21, 1.7976931348623157e308,
		5e-324, -2.5e-7, 0.000001, 100, math.Copysign(0, -1),
	} {
		t.Run(encodingJSON(t, f), func(t *testing.T) {
			ev := &eventsv1.Event{Payload: &eventsv1.Event_TokenUsage{TokenUsage: &eventsv1.TokenUsage{CostUsd: f}}}
			out := string(eventjson.Append(nil, ev))
			_, got, _ := strings.Cut(out, `"cost_usd":`)
			got = strings.TrimSuffix(got, "}")
			if want := encodingJSON(t, f); got != want {
				t.Errorf("cost_usd %v: got %s, want %s", f, got, want)
			}
		})
	}
}

func TestTimestampFormatting(t *testing.T) {
	tests := []struct {
		name string
		ns   int64
		want string
	}{
		{"zero", 0, "1970-01-01T00:00:00.000000Z"},
		{"truncates to microseconds", testTS, "2026-11-21T10:00:00.123456Z"},
		{"before 1970", -1, "1969-12-31T23:59:59.999999Z"},
		{"min", math.MinInt64, "1677-09-21T00:12:43.145224Z"},
		{"max", math.MaxInt64, "2262-04-11T23:47:16.854775Z"},
		{"leap day", time.Date(2028, 2, 29, 23, 59, 59, 999999999, time.UTC).UnixNano(), "2028-02-29T23:59:59.999999Z"},
		{"local clock", time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("x", 3600)).UnixNano(), "2026-01-02T02:04:05.000006Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &eventsv1.Event{TsUnixNano: tt.ns}
			out := string(eventjson.Append(nil, ev))
			if !strings.Contains(out, `"ts":"`+tt.want+`"`) {
				t.Errorf("got %s, want ts %s", out, tt.want)
			}
			if ref := time.Unix(0, tt.ns).UTC().Format("2006-01-02T15:04:05.000000Z"); ref != tt.want {
				t.Errorf("test table disagrees with time.Format: %s", ref)
			}
		})
	}
}
