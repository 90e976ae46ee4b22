package eventjson_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// testTS is 2026-11-21T10:00:00.123456789Z: the encoder keeps microseconds.
var testTS = time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.UTC).UnixNano()

const tsJSON = `"ts":"2026-11-21T10:00:00.123456Z"`

// stamped returns New(payload) stamped as event seq of session s1.
func stamped(seq uint64, payload proto.Message) *eventsv1.Event {
	ev := events.New(payload)
	ev.Session, ev.Seq, ev.TsUnixNano = "s1", seq, testTS
	return ev
}

func raw(s string) *eventsv1.RawJSON { return &eventsv1.RawJSON{Json: []byte(s)} }

func TestAppendJSONGolden(t *testing.T) {
	child := events.New(&eventsv1.MessageDelta{Delta: "hi"})
	child.Session, child.Seq, child.TsUnixNano = "s1/c-1", 2, testTS

	tests := []struct {
		name string
		ev   *eventsv1.Event
		want string
	}{
		{
			name: "tool_execution_start as in docs/protocol.md",
			ev: stamped(14, &eventsv1.ToolExecutionStart{
				Name: "sleep", CallId: "c-1", Args: raw(`{"ms":500}`),
			}),
			want: `{"type":"tool_execution_start","session":"s1","seq":14,"ts":"2026-11-21T10:00:00.123456Z","name":"sleep","call_id":"c-1","args":{"ms":500}}`,
		},
		{
			name: "raw args kept verbatim",
			ev: stamped(1, &eventsv1.ToolExecutionStart{
				Name: "x", CallId: "c", Args: raw(`{"b": 1.50, "a": [1e3]}`),
			}),
			want: `{"type":"tool_execution_start","session":"s1","seq":1,` + tsJSON + `,"name":"x","call_id":"c","args":{"b": 1.50, "a": [1e3]}}`,
		},
		{
			name: "multi-line raw compacted to one line",
			ev:   stamped(1, &eventsv1.PluginEvent{Plugin: "p", Name: "n", Payload: raw("{\n  \"a\": \"x y\",\r\n  \"b\": 2\n}\n")}),
			want: `{"type":"plugin_event","session":"s1","seq":1,` + tsJSON + `,"plugin":"p","name":"n","payload":{"a":"x y","b":2}}`,
		},
		{
			name: "invalid raw written as a string",
			ev:   stamped(1, &eventsv1.ToolExecutionStart{Name: "x", CallId: "c", Args: raw(`{"ms":`)}),
			want: `{"type":"tool_execution_start","session":"s1","seq":1,` + tsJSON + `,"name":"x","call_id":"c","args":"{\"ms\":"}`,
		},
		{
			name: "invalid UTF-8 in raw replaced",
			ev:   stamped(1, &eventsv1.ToolExecutionStart{Name: "x", CallId: "c", Args: raw("{\"a\":\"\xff\"}")}),
			want: `{"type":"tool_execution_start","session":"s1","seq":1,` + tsJSON + `,"name":"x","call_id":"c","args":{"a":"` + "\ufffd" + `"}}`,
		},
		{
			name: "unset and empty raw are null",
			ev:   stamped(1, &eventsv1.ApprovalRequired{ApprovalId: "ap-1", Tool: "shell", CallId: "c-9", Args: raw("")}),
			want: `{"type":"approval_required","session":"s1","seq":1,` + tsJSON + `,"approval_id":"ap-1","tool":"shell","call_id":"c-9","args":null,"hint":""}`,
		},
		{
			name: "agent_abort with null run_id",
			ev:   stamped(3, &eventsv1.AgentAbort{Reason: "user"}),
			want: `{"type":"agent_abort","session":"s1","seq":3,` + tsJSON + `,"run_id":null,"reason":"user"}`,
		},
		{
			name: "agent_abort with run_id",
			ev:   stamped(3, &eventsv1.AgentAbort{RunId: proto.String("r-1"), Reason: "user"}),
			want: `{"type":"agent_abort","session":"s1","seq":3,` + tsJSON + `,"run_id":"r-1","reason":"user"}`,
		},
		{
			name: "token_usage with null window",
			ev: stamped(9, &eventsv1.TokenUsage{
				ContextUsed: 900, SessionTotalTokens: 1540, Model: "local/qwen3-8b", CostUsd: 0.00123,
			}),
			want: `{"type":"token_usage","session":"s1","seq":9,` + tsJSON + `,"context_used":900,"context_window":null,"context_percent":null,"session_total_tokens":1540,"model":"local/qwen3-8b","cost_usd":0.00123}`,
		},
		{
			name: "token_usage with window",
			ev: stamped(9, &eventsv1.TokenUsage{
				ContextUsed: 900, ContextWindow: proto.Int64(8000), ContextPercent: proto.Float64(11.25),
				SessionTotalTokens: 1540, Model: "m", CostUsd: 0,
			}),
			want: `{"type":"token_usage","session":"s1","seq":9,` + tsJSON + `,"context_used":900,"context_window":8000,"context_percent":11.25,"session_total_tokens":1540,"model":"m","cost_usd":0}`,
		},
		{
			name: "NaN and Inf become null",
			ev:   stamped(9, &eventsv1.TokenUsage{ContextPercent: proto.Float64(math.NaN()), CostUsd: math.Inf(1)}),
			want: `{"type":"token_usage","session":"s1","seq":9,` + tsJSON + `,"context_used":0,"context_window":null,"context_percent":null,"session_total_tokens":0,"model":"","cost_usd":null}`,
		},
		{
			name: "message_committed user",
			ev:   stamped(5, &eventsv1.MessageCommitted{Index: 0, Message: &eventsv1.Message{Role: "user", Content: "hello", Thinking: "ignored"}}),
			want: `{"type":"message_committed","session":"s1","seq":5,` + tsJSON + `,"index":0,"message":{"role":"user","content":"hello"}}`,
		},
		{
			name: "message_committed assistant, text only",
			ev:   stamped(6, &eventsv1.MessageCommitted{Index: 1, Message: &eventsv1.Message{Role: "assistant", Content: "Let me look."}}),
			want: `{"type":"message_committed","session":"s1","seq":6,` + tsJSON + `,"index":1,"message":{"role":"assistant","content":"Let me look."}}`,
		},
		{
			name: "message_committed assistant with thinking and tool calls",
			ev: stamped(6, &eventsv1.MessageCommitted{Index: 1, Message: &eventsv1.Message{
				Role: "assistant", Content: "", Thinking: "hmm",
				ToolCalls: []*eventsv1.ToolCall{
					{Id: "c-1", Name: "sleep", Args: raw(`{"ms":10}`)},
					{Id: "c-2", Name: "echo"},
				},
			}}),
			want: `{"type":"message_committed","session":"s1","seq":6,` + tsJSON + `,"index":1,"message":{"role":"assistant","content":"","thinking":"hmm","tool_calls":[{"id":"c-1","name":"sleep","args":{"ms":10}},{"id":"c-2","name":"echo","args":null}]}}`,
		},
		{
			name: "message_committed tool",
			ev: stamped(7, &eventsv1.MessageCommitted{Index: 2, Message: &eventsv1.Message{
				Role: "tool", ToolCallId: "c-1", Content: "interrupted: aborted by user", IsError: true,
			}}),
			want: `{"type":"message_committed","session":"s1","seq":7,` + tsJSON + `,"index":2,"message":{"role":"tool","tool_call_id":"c-1","content":"interrupted: aborted by user","is_error":true}}`,
		},
		{
			name: "message_committed without message",
			ev:   stamped(7, &eventsv1.MessageCommitted{Index: 2}),
			want: `{"type":"message_committed","session":"s1","seq":7,` + tsJSON + `,"index":2,"message":null}`,
		},
		{
			name: "events_lost",
			ev:   stamped(0, &eventsv1.EventsLost{From: 3, To: 1026}),
			want: `{"type":"events_lost","session":"s1","seq":0,` + tsJSON + `,"from":3,"to":1026}`,
		},
		{
			name: "sub_agent_event nests a full event",
			ev:   stamped(30, &eventsv1.SubAgentEvent{CallId: "c-4", ChildSession: "s1/c-1", Event: child}),
			want: `{"type":"sub_agent_event","session":"s1","seq":30,` + tsJSON + `,"call_id":"c-4","child_session":"s1/c-1","event":{"type":"message_delta","session":"s1/c-1","seq":2,` + tsJSON + `,"delta":"hi"}}`,
		},
		{
			name: "sub_agent_event without event",
			ev:   stamped(30, &eventsv1.SubAgentEvent{CallId: "c-4", ChildSession: "s1/c-1"}),
			want: `{"type":"sub_agent_event","session":"s1","seq":30,` + tsJSON + `,"call_id":"c-4","child_session":"s1/c-1","event":null}`,
		},
		{
			name: "empty repeated fields are arrays",
			ev:   stamped(2, &eventsv1.ToolsUpdated{Attached: []string{"shell"}}),
			want: `{"type":"tools_updated","session":"s1","seq":2,` + tsJSON + `,"attached":["shell"],"detached":[]}`,
		},
		{
			name: "optional string unset and set",
			ev:   stamped(2, &eventsv1.AgentStatus{Status: "idle"}),
			want: `{"type":"agent_status","session":"s1","seq":2,` + tsJSON + `,"status":"idle","tool_name":null}`,
		},
		{
			name: "agent_end with usage",
			ev: stamped(40, &eventsv1.AgentEnd{RunId: "r-1", Reason: "completed", Usage: &eventsv1.Usage{
				InputTokens: 1200, OutputTokens: 340, TotalTokens: 1540, CostUsd: 0.5,
			}}),
			want: `{"type":"agent_end","session":"s1","seq":40,` + tsJSON + `,"run_id":"r-1","reason":"completed","usage":{"input_tokens":1200,"output_tokens":340,"total_tokens":1540,"cost_usd":0.5,"cached_input_tokens":0,"reasoning_tokens":0}}`,
		},
		{
			name: "event without fields",
			ev:   stamped(4, &eventsv1.ThinkingStart{}),
			want: `{"type":"thinking_start","session":"s1","seq":4,` + tsJSON + `}`,
		},
		{
			name: "escaping",
			ev:   stamped(4, &eventsv1.MessageDelta{Delta: "a\"b\\c\n\t<&>é\u2028\x01\xff"}),
			want: `{"type":"message_delta","session":"s1","seq":4,` + tsJSON + `,"delta":"a\"b\\c\n\t<&>é\u2028\u0001\ufffd"}`,
		},
		{
			name: "large numbers stay numbers",
			ev:   stamped(math.MaxUint64, &eventsv1.LargeResultOffloaded{Tool: "t", CallId: "c", Path: "/tmp/x", Bytes: math.MaxInt64}),
			want: `{"type":"large_result_offloaded","session":"s1","seq":18446744073709551615,` + tsJSON + `,"tool":"t","call_id":"c","path":"/tmp/x","bytes":9223372036854775807}`,
		},
		{
			name: "wrapper holding a nil payload",
			ev:   &eventsv1.Event{Session: "s1", Seq: 1, TsUnixNano: testTS, Payload: &eventsv1.Event_MessageDelta{}},
			want: `{"type":"message_delta","session":"s1","seq":1,` + tsJSON + `,"delta":""}`,
		},
		{
			name: "no payload",
			ev:   &eventsv1.Event{Session: "s1", Seq: 1},
			want: `{"type":"","session":"s1","seq":1,"ts":"1970-01-01T00:00:00.000000Z"}`,
		},
		{
			name: "nil event",
			ev:   nil,
			want: `null`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := eventjson.Append([]byte("prefix:"), tt.ev)
			if string(got) != "prefix:"+tt.want {
				t.Errorf("Append\n got: %s\nwant: prefix:%s", got, tt.want)
			}
			if !json.Valid(got[len("prefix:"):]) {
				t.Errorf("output is not valid JSON: %s", got)
			}
			m, err := eventjson.Marshal(tt.ev)
			if err != nil || string(m) != tt.want {
				t.Errorf("Marshal = %s, %v; want the Append form", m, err)
			}
		})
	}
}

// getStateExample is the get_state answer of docs/protocol.md, verbatim.
const getStateExample = `{"state":"executing_tools","model":"script:demo.json","run_id":"r-3",
 "prompt_queue":["then summarise"],"steering_queue":[{"ref":"st-1","text":"stop that"}],
 "pending_approvals":[{"approval_id":"ap-1","tool":"shell","call_id":"c-9","args":{"command":"rm -rf build"}}],
 "pending_question":null,"running_tools":[{"call_id":"c-8","name":"sleep_immune","immune":true}],
 "message_count":7,
 "usage":{"input_tokens":1200,"output_tokens":340,"total_tokens":1540,"cost_usd":0.0},
 "context":{"used":900,"window":8000,"percent":11.25},"title":"Deploy the build"}`

// TestGetStateShape encodes the SessionState of the docs/protocol.md example and
// checks it against the example: the same keys in the same order with the
// same values, plus only the fields the proto adds.
func TestGetStateShape(t *testing.T) {
	st := &eventsv1.SessionState{
		State:            "executing_tools",
		Model:            "script:demo.json",
		RunId:            proto.String("r-3"),
		PromptQueue:      []string{"then summarise"},
		SteeringQueue:    []*eventsv1.SteeringItem{{Ref: "st-1", Text: "stop that"}},
		PendingApprovals: []*eventsv1.PendingApproval{{ApprovalId: "ap-1", Tool: "shell", CallId: "c-9", Args: raw(`{"command":"rm -rf build"}`)}},
		RunningTools:     []*eventsv1.RunningTool{{CallId: "c-8", Name: "sleep_immune", Immune: true}},
		MessageCount:     7,
		Usage:            &eventsv1.Usage{InputTokens: 1200, OutputTokens: 340, TotalTokens: 1540},
		Context:          &eventsv1.ContextInfo{Used: 900, Window: proto.Int64(8000), Percent: proto.Float64(11.25)},
		Title:            "Deploy the build",
		Todos:            []*eventsv1.Todo{{Text: "build", Status: "done"}, {Text: "deploy", Status: "in_progress"}},
	}
	got, err := eventjson.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"state":"executing_tools","model":"script:demo.json","run_id":"r-3",` +
		`"prompt_queue":["then summarise"],"steering_queue":[{"ref":"st-1","text":"stop that"}],` +
		`"pending_approvals":[{"approval_id":"ap-1","tool":"shell","call_id":"c-9","args":{"command":"rm -rf build"},"hint":""}],` +
		`"pending_question":null,"running_tools":[{"call_id":"c-8","name":"sleep_immune","immune":true}],` +
		`"message_count":7,` +
		`"usage":{"input_tokens":1200,"output_tokens":340,"total_tokens":1540,"cost_usd":0,"cached_input_tokens":0,"reasoning_tokens":0},` +
		`"context":{"used":900,"window":8000,"percent":11.25},"abandoned_tools":0,"title":"Deploy the build",` +
		`"todos":[{"text":"build","status":"done"},{"text":"deploy","status":"in_progress"}],"subagent_usage":null}`
	if string(got) != want {
		t.Errorf("Marshal(SessionState)\n got: %s\nwant: %s", got, want)
	}

	// Beyond the example, the proto adds only these keys.
	extra := map[string]bool{"abandoned_tools": true, "usage.cached_input_tokens": true, "usage.reasoning_tokens": true,
		"pending_approvals[].hint": true, "todos": true, "todos[].text": true, "todos[].status": true, "subagent_usage": true}
	gotKeys := flatKeys(t, got, extra)
	wantKeys := flatKeys(t, []byte(getStateExample), nil)
	if len(wantKeys) < 20 {
		t.Fatalf("flatKeys found only %v", wantKeys)
	}
	if strings.Join(gotKeys, " ") != strings.Join(wantKeys, " ") {
		t.Errorf("keys differ from the docs/protocol.md example\n got: %v\nwant: %v", gotKeys, wantKeys)
	}
	var gotV, wantV map[string]any
	if err := json.Unmarshal(got, &gotV); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(getStateExample), &wantV); err != nil {
		t.Fatal(err)
	}
	delete(gotV, "abandoned_tools")
	delete(gotV, "todos")
	delete(gotV, "subagent_usage")
	delete(gotV["usage"].(map[string]any), "cached_input_tokens")
	delete(gotV["usage"].(map[string]any), "reasoning_tokens")
	delete(gotV["pending_approvals"].([]any)[0].(map[string]any), "hint")
	g, _ := json.Marshal(gotV)
	w, _ := json.Marshal(wantV)
	if !bytes.Equal(g, w) {
		t.Errorf("values differ from the docs/protocol.md example\n got: %s\nwant: %s", g, w)
	}
}

// flatKeys lists the object keys of a JSON document in document order as
// dotted paths (elements of arrays as "name[]."), leaving out those in skip.
func flatKeys(t *testing.T, data []byte, skip map[string]bool) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	var keys []string
	var walk func(prefix string)
	walk = func(prefix string) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				path := prefix + k.(string)
				if !skip[path] {
					keys = append(keys, path)
				}
				walk(path + ".")
			}
			dec.Token()
		case json.Delim('['):
			for dec.More() {
				walk(strings.TrimSuffix(prefix, ".") + "[].")
			}
			dec.Token()
		}
	}
	walk("")
	return keys
}

// TestTimestamp: times are written in UTC with six fractional digits,
// truncated, whatever their zone.
func TestTimestamp(t *testing.T) {
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 24, 11, 0, 0, 123456789, time.FixedZone("CET", 3600)), "2026-11-24T10:00:00.123456Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05.000000Z"},
	} {
		if got := eventjson.Timestamp(tc.in); got != tc.want {
			t.Errorf("Timestamp(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
