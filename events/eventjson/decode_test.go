package eventjson_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

func TestUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		into proto.Message
		want proto.Message
	}{
		{
			name: "prompt",
			in:   `{"text":"hi \u00e9\n"}`,
			into: &eventsv1.Prompt{},
			want: &eventsv1.Prompt{Text: "hi é\n"},
		},
		{
			name: "steer without interrupt_tools leaves it unset",
			in:   `{"text":"stop"}`,
			into: &eventsv1.Steer{},
			want: &eventsv1.Steer{Text: "stop"},
		},
		{
			name: "steer with interrupt_tools false sets it",
			in:   `{"text":"stop","interrupt_tools":false}`,
			into: &eventsv1.Steer{},
			want: &eventsv1.Steer{Text: "stop", InterruptTools: proto.Bool(false)},
		},
		{
			name: "null is absent",
			in:   `{"text":null,"interrupt_tools":null}`,
			into: &eventsv1.Steer{},
			want: &eventsv1.Steer{},
		},
		{
			name: "abort",
			in:   `{"kill_tools":"all","clear_queue":true}`,
			into: &eventsv1.Abort{},
			want: &eventsv1.Abort{KillTools: "all", ClearQueue: true},
		},
		{
			name: "create_session with plugins and inline script",
			in: `{"session":"s1","model":"script:inline","system":"be brief",
				"script":{"turns":[{"text":"Hi", "delay_ms": 1.50e1}],"when_exhausted":"echo"},
				"tools":["sleep","echo"],
				"plugins":[{"name":"guard","config":{"deny":["rm"]}},{"name":"loop"},{"name":"x","config":"str"}]}`,
			into: &eventsv1.CreateSession{},
			want: &eventsv1.CreateSession{
				Session: "s1", Model: "script:inline", System: "be brief",
				Script: raw(`{"turns":[{"text":"Hi", "delay_ms": 1.50e1}],"when_exhausted":"echo"}`),
				Tools:  []string{"sleep", "echo"},
				Plugins: []*eventsv1.PluginConfig{
					{Name: "guard", Config: raw(`{"deny":["rm"]}`)},
					{Name: "loop"},
					{Name: "x", Config: raw(`"str"`)},
				},
			},
		},
		{
			name: "subscribe",
			in:   `{"since":18446744073709551615,"types":["tool_*","agent_end"]}`,
			into: &eventsv1.Subscribe{},
			want: &eventsv1.Subscribe{Since: 18446744073709551615, Types: []string{"tool_*", "agent_end"}},
		},
		{
			name: "integral numbers in other notations",
			in:   `{"since":1e3}`,
			into: &eventsv1.Subscribe{},
			want: &eventsv1.Subscribe{Since: 1000},
		},
		{
			name: "empty arrays",
			in:   `{"types":[]}`,
			into: &eventsv1.Subscribe{},
			want: &eventsv1.Subscribe{},
		},
		{
			name: "resets the target first",
			in:   `{}`,
			into: &eventsv1.Prompt{Text: "old"},
			want: &eventsv1.Prompt{},
		},
		{
			name: "event form",
			in:   `{"type":"tool_execution_start","session":"s1","seq":14,"ts":"2026-11-21T10:00:00.123456Z","name":"sleep","call_id":"c-1","args":{"ms":500}}`,
			into: &eventsv1.Event{},
			want: func() proto.Message {
				ev := events.New(&eventsv1.ToolExecutionStart{Name: "sleep", CallId: "c-1", Args: raw(`{"ms":500}`)})
				ev.Session, ev.Seq, ev.TsUnixNano = "s1", 14, testTS/1000*1000
				return ev
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := eventjson.Unmarshal([]byte(tt.in), tt.into); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !proto.Equal(tt.into, tt.want) {
				t.Errorf("got %v\nwant %v", tt.into, tt.want)
			}
		})
	}
}

func TestUnmarshalJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		into proto.Message
		want string
	}{
		{"string expected", `{"text":5}`, &eventsv1.Prompt{}, `field "text": expected a string`},
		{"bool expected", `{"interrupt_tools":"yes"}`, &eventsv1.Steer{}, `field "interrupt_tools": expected true or false`},
		{"negative uint", `{"since":-1}`, &eventsv1.Subscribe{}, `field "since": -1 is out of range for uint64`},
		{"fraction", `{"since":1.5}`, &eventsv1.Subscribe{}, `field "since": expected an integer, got 1.5`},
		{"number as string", `{"since":"3"}`, &eventsv1.Subscribe{}, `field "since": expected an integer`},
		{"uint64 overflow", `{"since":18446744073709551616}`, &eventsv1.Subscribe{}, `field "since": 18446744073709551616 is out of range for uint64`},
		{"int32 overflow", `{"position":2147483648}`, &eventsv1.PromptQueued{}, `field "position": 2147483648 is out of range for int32`},
		{"inexact float as integer", `{"position":1e300}`, &eventsv1.PromptQueued{}, `field "position": 1e300 is out of range for int32`},
		{"array expected", `{"types":"tool_*"}`, &eventsv1.Subscribe{}, `field "types": expected an array`},
		{"element type", `{"types":["a",1]}`, &eventsv1.Subscribe{}, `field "types[1]": expected a string`},
		{"null element", `{"types":[null]}`, &eventsv1.Subscribe{}, `field "types[0]": expected a string`},
		{"nested field", `{"plugins":[{"name":"a"},{"name":3}]}`, &eventsv1.CreateSession{}, `field "plugins[1].name": expected a string`},
		{"object expected", `{"plugins":["guard"]}`, &eventsv1.CreateSession{}, `field "plugins[0]": expected an object`},
		{"double expected", `{"cost_usd":"1"}`, &eventsv1.Usage{}, `field "cost_usd": expected a number`},
		{"double overflow", `{"cost_usd":1e400}`, &eventsv1.Usage{}, `field "cost_usd": number 1e400 is out of range`},
		{"unknown event type", `{"type":"nope"}`, &eventsv1.Event{}, `field "type": unknown event type "nope"`},
		{"bad ts", `{"type":"thinking_start","ts":"yesterday"}`, &eventsv1.Event{}, `field "ts": expected an RFC 3339 time string`},
		{"nested event field", `{"events":[{"type":"message_delta","delta":1}]}`, &eventsv1.EventList{}, `field "events[0].delta": expected a string`},
		{"unknown field", `{"kill_tool":"all"}`, &eventsv1.Abort{}, `unknown field "kill_tool"`},
		{"the first unknown field in sorted order", `{"text":"a","zz":1,"cmd":"prompt"}`, &eventsv1.Prompt{}, `unknown field "cmd"`},
		{"unknown null field", `{"kill_tool":null}`, &eventsv1.Abort{}, `unknown field "kill_tool"`},
		{"field of another case", `{"Text":"a"}`, &eventsv1.Prompt{}, `unknown field "Text"`},
		{"unknown nested field", `{"plugins":[{"name":"a"},{"name":"b","cfg":{}}]}`, &eventsv1.CreateSession{}, `unknown field "cfg" in plugins[1]`},
		{"raw JSON is not checked, a field beside it is", `{"plugins":[{"config":{"any":1},"x":2}]}`, &eventsv1.CreateSession{}, `unknown field "x" in plugins[0]`},
		{"unknown event field", `{"type":"message_delta","delta":"a","text":"b"}`, &eventsv1.Event{}, `unknown field "text"`},
		{"event without payload", `{"session":"s1","delta":"a"}`, &eventsv1.Event{}, `unknown field "delta"`},
		{"unknown field of a nested event", `{"events":[{"type":"message_delta","delta":"a","cmd":1}]}`, &eventsv1.EventList{}, `unknown field "cmd" in events[0]`},
		{"unknown field of a message", `{"messages":[{"role":"user","content":"a","name":"x"}]}`, &eventsv1.MessageList{}, `unknown field "name" in messages[0]`},
		{"not an object", `["prompt"]`, &eventsv1.Prompt{}, `expected a JSON object`},
		{"not JSON", `{"text":`, &eventsv1.Prompt{}, `invalid JSON: unexpected end of JSON input`},
		{"trailing garbage", `{"text":"a"} x`, &eventsv1.Prompt{}, `invalid JSON: invalid character 'x' after top-level value`},
		{"empty", ``, &eventsv1.Prompt{}, `invalid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := eventjson.Unmarshal([]byte(tt.in), tt.into)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Unmarshal(%s) error = %v, want %q", tt.in, err, tt.want)
			}
		})
	}
}

// FuzzUnmarshalJSON feeds arbitrary lines to the decoder: it must not
// panic, what it accepts must survive a write and a read, and it accepts
// no key that the write leaves out (an unknown field is an error).
func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range []string{
		`{"cmd":"create_session","plugins":[{"name":"p","config":{"a":[1,2]}}],"script":{"x":1}}`,
		`{"type":"sub_agent_event","event":{"type":"message_delta","delta":"x"}}`,
		`{"since":1e3,"types":["a"]}`, `{"text":"\ud800"}`, "{\"script\":\"\xff\"}", `[]`, `null`, `{"interrupt_tools":true}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range []proto.Message{&eventsv1.CreateSession{}, &eventsv1.Event{}, &eventsv1.Steer{}, &eventsv1.Subscribe{}} {
			if eventjson.Unmarshal([]byte(s), m) != nil {
				continue
			}
			data, err := eventjson.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if in, err := eventjson.ParseObject([]byte(s)); err == nil {
				written, err := eventjson.ParseObject(data)
				if err != nil {
					t.Fatalf("wrote %s: %v", data, err)
				}
				for k := range in {
					if _, ok := written[k]; !ok {
						t.Fatalf("accepted key %q of %s that is no field of %T (wrote %s)", k, s, m, data)
					}
				}
			}
			back := m.ProtoReflect().New().Interface()
			if err := eventjson.Unmarshal(data, back); err != nil {
				t.Fatalf("reading back %s: %v", data, err)
			}
			if !proto.Equal(m, back) {
				t.Fatalf("round trip of %s changed %v into %v", data, m, back)
			}
		}
	})
}
