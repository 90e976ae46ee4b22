package builtin_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

func demoSet(t *testing.T) *tools.Set {
	t.Helper()
	set, err := tools.NewSet(builtin.Demo()...)
	if err != nil {
		t.Fatalf("NewSet(Demo()): %v", err)
	}
	return set
}

func TestDemoSpecs(t *testing.T) {
	set := demoSet(t)
	if got, want := set.Names(), builtin.DemoNames(); !slices.Equal(got, want) {
		t.Fatalf("Names = %v, DemoNames = %v", got, want)
	}
	tests := []struct {
		name string
		kind tools.Kind
	}{
		{name: "echo", kind: tools.Killable},
		{name: "shell", kind: tools.Killable},
		{name: "sleep", kind: tools.Killable},
		{name: "sleep_immune", kind: tools.Immune},
		{name: "sleep_stubborn", kind: tools.Killable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp, ok := set.Spec(tt.name)
			if !ok {
				t.Fatal("missing")
			}
			if sp.Kind != tt.kind {
				t.Errorf("Kind = %v, want %v", sp.Kind, tt.kind)
			}
			if len(sp.Description) < 20 {
				t.Errorf("Description %q is too thin for a model", sp.Description)
			}
		})
	}
}

func TestDemoArgs(t *testing.T) {
	set := demoSet(t)
	tests := []struct {
		name    string
		tool    string
		args    string
		wantErr string
	}{
		{name: "sleep ok", tool: "sleep", args: `{"ms":0}`},
		{name: "sleep negative", tool: "sleep", args: `{"ms":-5}`, wantErr: "invalid arguments for sleep: /ms: got -5, want at least 0"},
		{name: "sleep string", tool: "sleep_stubborn", args: `{"ms":"5"}`, wantErr: "invalid arguments for sleep_stubborn: /ms: got string, want integer"},
		{name: "sleep missing", tool: "sleep_immune", args: `{}`, wantErr: `invalid arguments for sleep_immune: missing property "ms"`},
		{name: "echo ok", tool: "echo", args: `{"text":"hi"}`},
		{name: "echo extra", tool: "echo", args: `{"text":"hi","loud":true}`, wantErr: `invalid arguments for echo: property "loud" is not allowed`},
		{name: "shell ok", tool: "shell", args: `{"command":"true"}`},
		{name: "shell missing", tool: "shell", args: `{}`, wantErr: `invalid arguments for shell: missing property "command"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := set.Validate(tt.tool, json.RawMessage(tt.args))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("Validate = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestEcho(t *testing.T) {
	tests := []struct {
		name string
		args string
		want tools.Result
	}{
		{name: "text", args: `{"text":"hello, world"}`, want: tools.Result{Content: "hello, world"}},
		{name: "empty text", args: `{"text":""}`, want: tools.Result{Content: ""}},
		{name: "not JSON", args: `{`, want: tools.Result{Content: "invalid arguments: unexpected end of JSON input", IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tools.Execute(context.Background(), builtin.Echo(), json.RawMessage(tt.args), nil)
			if got != tt.want {
				t.Errorf("Execute = %+v, want %+v", got, tt.want)
			}
		})
	}
}
