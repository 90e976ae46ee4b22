package tools_test

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/tack-run/tack/tools"
)

func TestValidate(t *testing.T) {
	set := mustSet(t, fake("sleep", sleepSchema), fake("shell", shellSchema), fake("noargs", ""),
		fake("two", `{"type":"object","properties":{"a":{},"b":{}},"required":["b","a"]}`))
	tests := []struct {
		name    string
		tool    string
		args    string
		wantErr string // "" means valid
		unknown bool
	}{
		{name: "good args", tool: "sleep", args: `{"ms":10}`},
		{name: "integral float is an integer", tool: "sleep", args: `{"ms":10.0}`},
		{name: "wrong type names the field", tool: "sleep", args: `{"ms":"10"}`,
			wantErr: "invalid arguments for sleep: /ms: got string, want integer"},
		{name: "below minimum", tool: "sleep", args: `{"ms":-1}`,
			wantErr: "invalid arguments for sleep: /ms: got -1, want at least 0"},
		{name: "fraction is not an integer", tool: "sleep", args: `{"ms":1.5}`,
			wantErr: "invalid arguments for sleep: /ms: got number, want integer"},
		{name: "missing required", tool: "shell", args: `{}`,
			wantErr: `invalid arguments for shell: missing property "command"`},
		{name: "empty args are an empty object", tool: "shell", args: ``,
			wantErr: `invalid arguments for shell: missing property "command"`},
		{name: "null args are an empty object", tool: "shell", args: `null`,
			wantErr: `invalid arguments for shell: missing property "command"`},
		{name: "several missing", tool: "two", args: `{}`,
			wantErr: `invalid arguments for two: missing properties "a", "b"`},
		{name: "extra property", tool: "shell", args: `{"command":"ls","cwd":"/"}`,
			wantErr: `invalid arguments for shell: property "cwd" is not allowed`},
		{name: "several problems on one line", tool: "sleep", args: `{"ms":"x","a":1,"b":2}`,
			wantErr: `invalid arguments for sleep: /ms: got string, want integer; properties "a", "b" are not allowed`},
		{name: "not an object", tool: "sleep", args: `[1,2]`,
			wantErr: "invalid arguments for sleep: got array, want object"},
		{name: "a string is not an object", tool: "sleep", args: `"ms"`,
			wantErr: "invalid arguments for sleep: got string, want object"},
		{name: "not JSON", tool: "sleep", args: `{"ms":`,
			wantErr: "invalid arguments for sleep: not valid JSON: unexpected EOF"},
		{name: "trailing data", tool: "sleep", args: `{"ms":1} {}`,
			wantErr: "invalid arguments for sleep: not valid JSON: invalid character after top-level value"},
		{name: "default schema takes no args", tool: "noargs", args: ``},
		{name: "default schema refuses args", tool: "noargs", args: `{"x":1}`,
			wantErr: `invalid arguments for noargs: property "x" is not allowed`},
		{name: "unknown tool", tool: "grep", args: `{}`, wantErr: `unknown tool "grep"`, unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := set.Validate(tt.tool, json.RawMessage(tt.args))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: nil error, want %q", tt.wantErr)
			}
			if got := err.Error(); got != tt.wantErr {
				t.Errorf("error = %q, want %q", got, tt.wantErr)
			}
			var argsErr *tools.ArgsError
			if isArgs := errors.As(err, &argsErr); isArgs == tt.unknown {
				t.Errorf("errors.As(*ArgsError) = %v, want %v", isArgs, !tt.unknown)
			}
			if got := errors.Is(err, tools.ErrUnknownTool); got != tt.unknown {
				t.Errorf("errors.Is(ErrUnknownTool) = %v, want %v", got, tt.unknown)
			}
		})
	}
}

func TestValidateNilSet(t *testing.T) {
	var set *tools.Set
	if err := set.Validate("sleep", nil); !errors.Is(err, tools.ErrUnknownTool) {
		t.Fatalf("Validate on nil Set = %v, want ErrUnknownTool", err)
	}
}

func TestValidateConcurrent(t *testing.T) {
	set := mustSet(t, fake("sleep", sleepSchema))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			args := `{"ms":1}`
			if i%2 == 1 {
				args = `{"ms":"x"}`
			}
			err := set.Validate("sleep", json.RawMessage(args))
			if (err != nil) != (i%2 == 1) {
				t.Errorf("goroutine %d: Validate = %v", i, err)
			}
		})
	}
	wg.Wait()
}
