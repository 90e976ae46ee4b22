package tools_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tack-run/tack/tools"
)

func TestNewSetErrors(t *testing.T) {
	tests := []struct {
		name    string
		tools   []tools.Tool
		wantErr string
	}{
		{name: "duplicate name", tools: []tools.Tool{fake("echo", ""), fake("echo", "")},
			wantErr: `tools: duplicate tool name "echo"`},
		{name: "empty name", tools: []tools.Tool{fake("", "")},
			wantErr: "tools: tool with an empty name"},
		{name: "name providers refuse", tools: []tools.Tool{fake("read file", "")},
			wantErr: `tools: tool name "read file": want 1 to 64 letters, digits, '_' or '-' (and at most one '/', which counts as two)`},
		{name: "two slashes", tools: []tools.Tool{fake("a/b/c", "")},
			wantErr: `tools: tool name "a/b/c": want 1 to 64 letters, digits, '_' or '-' (and at most one '/', which counts as two)`},
		{name: "too long once sent", tools: []tools.Tool{fake("s/"+strings.Repeat("x", 62), "")},
			wantErr: `tools: tool name "s/` + strings.Repeat("x", 62) + `": want 1 to 64 letters, digits, '_' or '-' (and at most one '/', which counts as two)`},
		{name: "nil tool", tools: []tools.Tool{nil},
			wantErr: "tools: tool 0 is nil"},
		{name: "schema not JSON", tools: []tools.Tool{fake("bad", `{"type":`)},
			wantErr: `tools: schema of tool "bad": not valid JSON`},
		{name: "schema not an object schema", tools: []tools.Tool{fake("bad", `{"type":"string"}`)},
			wantErr: `tools: schema of tool "bad": want "type": "object" at the top level`},
		{name: "schema that does not compile", tools: []tools.Tool{fake("bad", `{"type":"object","properties":{"ms":{"type":"int"}}}`)},
			wantErr: `tools: schema of tool "bad": `},
		{name: "schema with a remote ref", tools: []tools.Tool{fake("bad", `{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`)},
			wantErr: `tools: schema of tool "bad": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tools.NewSet(tt.tools...)
			if err == nil {
				t.Fatalf("NewSet = %v, nil; want error %q", s.Names(), tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("error = %q, want prefix %q", err, tt.wantErr)
			}
		})
	}
}

func TestSetReads(t *testing.T) {
	immune := tools.Define(tools.Spec{Name: "a_immune", Schema: json.RawMessage(sleepSchema), Kind: tools.Immune}, nil)
	set := mustSet(t, fake("shell", shellSchema), fake("echo", ""), immune)

	if got, want := set.Names(), []string{"a_immune", "echo", "shell"}; !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	var specNames []string
	for _, sp := range set.Specs() {
		specNames = append(specNames, sp.Name)
	}
	if want := []string{"a_immune", "echo", "shell"}; !slices.Equal(specNames, want) {
		t.Errorf("Specs names = %v, want %v", specNames, want)
	}
	if got := set.Len(); got != 3 {
		t.Errorf("Len = %d, want 3", got)
	}
	if _, ok := set.Get("echo"); !ok {
		t.Error(`Get("echo") not found`)
	}
	if _, ok := set.Get("nope"); ok {
		t.Error(`Get("nope") found`)
	}
	sp, ok := set.Spec("a_immune")
	if !ok || sp.Kind != tools.Immune {
		t.Errorf(`Spec("a_immune") = %+v, %v; want Kind Immune`, sp, ok)
	}
	if sp, _ := set.Spec("echo"); !json.Valid(sp.Schema) || !strings.Contains(string(sp.Schema), `"type":"object"`) {
		t.Errorf("default schema = %s, want an object schema", sp.Schema)
	}
	specs := set.Specs()
	specs[0].Name = "changed"
	if set.Specs()[0].Name != "a_immune" {
		t.Error("Specs returned the Set's own slice")
	}
}

func TestSetWith(t *testing.T) {
	base := mustSet(t, fake("echo", ""))
	bigger, err := base.With(fake("sleep", sleepSchema))
	if err != nil {
		t.Fatalf("With: %v", err)
	}
	if got := base.Names(); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("base changed: %v", got)
	}
	if got := bigger.Names(); !slices.Equal(got, []string{"echo", "sleep"}) {
		t.Errorf("bigger = %v", got)
	}
	if err := bigger.Validate("sleep", json.RawMessage(`{"ms":"x"}`)); err == nil {
		t.Error("bigger does not validate sleep's schema")
	}
	if _, err := bigger.With(fake("echo", "")); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("With duplicate = %v, want duplicate error", err)
	}
}

func TestNilAndEmptySet(t *testing.T) {
	for name, set := range map[string]*tools.Set{"nil": nil, "empty": mustSet(t)} {
		t.Run(name, func(t *testing.T) {
			if set.Len() != 0 || len(set.Names()) != 0 || len(set.Specs()) != 0 {
				t.Errorf("Len %d, Names %v, Specs %v; want empty", set.Len(), set.Names(), set.Specs())
			}
			if _, ok := set.Get("x"); ok {
				t.Error("Get found a tool")
			}
			grown, err := set.With(fake("echo", ""))
			if err != nil || grown.Len() != 1 {
				t.Errorf("With = %v, %v", grown.Names(), err)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	tests := []struct {
		name string
		kind tools.Kind
		want string
	}{
		{name: "killable", kind: tools.Killable, want: "killable"},
		{name: "immune", kind: tools.Immune, want: "immune"},
		{name: "out of range", kind: 7, want: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.kind.String(); got != tt.want {
				t.Errorf("String = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWireName(t *testing.T) {
	for _, tt := range []struct{ name, wire string }{
		{"echo", "echo"},
		{"fs/read_file", "fs__read_file"},
		{"s/" + strings.Repeat("x", 60), "s__" + strings.Repeat("x", 60)},
		{"a2a:remote", "a2a__remote"},
	} {
		if got := tools.WireName(tt.name); got != tt.wire {
			t.Errorf("WireName(%q) = %q, want %q", tt.name, got, tt.wire)
		}
		if !tools.ValidName(tt.name) {
			t.Errorf("ValidName(%q) = false, want true", tt.name)
		}
	}
	for _, bad := range []string{"x:remote", "a2a:", "a2a:a/b", "a/b/c", "a2a:x:y"} {
		if tools.ValidName(bad) {
			t.Errorf("ValidName(%q) = true", bad)
		}
	}
}
