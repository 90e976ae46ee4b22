package strictjson_test

import (
	"encoding/json"
	"testing"

	"github.com/tack-run/tack/internal/strictjson"
)

type call struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type base struct {
	Priority int `json:"priority"`
}

type turn struct {
	Text  string            `json:"text,omitempty"`
	Calls []call            `json:"tool_calls,omitempty"`
	Usage *struct{ In int } `json:"usage,omitempty"`
	Tags  map[string]call   `json:"tags,omitempty"`
}

type doc struct {
	base
	Turns   []turn `json:"turns"`
	Skipped string `json:"-"`
	Plain   bool
	hidden  int
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"known fields", `{"priority":3,"Plain":true,"turns":[{"text":"a","tool_calls":[{"name":"x","args":{"any":1}}],"usage":{"In":2}}]}`, ""},
		{"top level", `{"turns":[],"bogus":1}`, `unknown field "bogus"`},
		{"the first in sorted order", `{"zz":1,"aa":2}`, `unknown field "aa"`},
		{"in a list element", `{"turns":[{"text":"a"},{"text":"b","delay":5}]}`, `unknown field "delay" in turns[1]`},
		{"deeper", `{"turns":[{"tool_calls":[{"name":"x","arg":{}}]}]}`, `unknown field "arg" in turns[0].tool_calls[0]`},
		{"through a pointer", `{"turns":[{"usage":{"In":1,"Out":2}}]}`, `unknown field "Out" in turns[0].usage`},
		{"in a map value", `{"turns":[{"tags":{"k":{"name":"x","nme":"y"}}}]}`, `unknown field "nme" in turns[0].tags.k`},
		{"another case", `{"Turns":[]}`, `unknown field "Turns"`},
		{"a field json ignores", `{"Skipped":"x"}`, `unknown field "Skipped"`},
		{"an unexported field", `{"hidden":1}`, `unknown field "hidden"`},
		{"raw JSON is not looked into", `{"turns":[{"tool_calls":[{"name":"x","args":{"deep":{"k":1}}}]}]}`, ""},
		{"a type error", `{"turns":"no"}`, `json: cannot unmarshal string into Go struct field doc.turns of type []strictjson_test.turn`},
		{"data after the value", `{"turns":[]} {}`, `unexpected data after the object`},
		{"not JSON", `{"turns":`, `unexpected EOF`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d doc
			err := strictjson.Decode([]byte(tt.in), &d)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Decode(%s) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeKeepsDefaults(t *testing.T) {
	d := doc{base: base{Priority: 7}, Plain: true}
	if err := strictjson.Decode([]byte(`{"turns":[]}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.Priority != 7 || !d.Plain {
		t.Fatalf("defaults lost: %+v", d)
	}
}

func TestWithin(t *testing.T) {
	e := &strictjson.UnknownFieldError{Field: "x", In: "turns[0]"}
	if got := e.Within("create_session.script").Error(); got != `unknown field "x" in create_session.script.turns[0]` {
		t.Fatal(got)
	}
	top := &strictjson.UnknownFieldError{Field: "x"}
	if got := top.Within("abort").Error(); got != `unknown field "x" in abort` {
		t.Fatal(got)
	}
}
