package plugins_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/tools"
)

// registry holds "echo", whose factory makes a plugin named after its
// config, "broken", whose factory fails, and "wild", whose priority is the
// config's number.
func registry(t *testing.T) *plugins.Registry {
	t.Helper()
	r := plugins.NewRegistry()
	must := func(err error) {
		if err != nil {
			t.Fatalf("Register: %v", err)
		}
	}
	must(r.Register("echo", func(raw json.RawMessage) (plugins.Plugin, error) {
		return &fake{name: "echo" + string(raw), priority: 1}, nil
	}))
	must(r.Register("broken", func(json.RawMessage) (plugins.Plugin, error) { return nil, errors.New("bad config") }))
	must(r.Register("wild", func(raw json.RawMessage) (plugins.Plugin, error) {
		var n int
		err := json.Unmarshal(raw, &n)
		return &fake{name: "wild", priority: n}, err
	}))
	return r
}

func TestRegistry(t *testing.T) {
	r := registry(t)
	if got, want := r.Names(), []string{"broken", "echo", "wild"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if err := r.Register("echo", nil); err == nil || err.Error() != `plugins: "echo" is registered already` {
		t.Errorf("second Register = %v", err)
	}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name      string
		cfgs      []plugins.Config
		wantNames []string
		wantErr   string
	}{
		{name: "none"},
		{name: "in the order given, config passed as is",
			cfgs:      []plugins.Config{{Name: "wild", Config: json.RawMessage(`7`)}, {Name: "echo", Config: json.RawMessage(`-x`)}, {Name: "echo"}},
			wantNames: []string{"wild", "echo-x", "echo"}},
		{name: "unknown name lists the registered ones", cfgs: []plugins.Config{{Name: "echo"}, {Name: "nope"}},
			wantErr: `unknown plugin "nope" (registered: broken, echo, wild)`},
		{name: "bad config", cfgs: []plugins.Config{{Name: "broken"}}, wantErr: `plugin "broken": bad config`},
		{name: "priority too low", cfgs: []plugins.Config{{Name: "wild", Config: json.RawMessage(`0`)}},
			wantErr: `plugin "wild": priority 0 is outside 1–1000`},
		{name: "priority too high", cfgs: []plugins.Config{{Name: "wild", Config: json.RawMessage(`1001`)}},
			wantErr: `plugin "wild": priority 1001 is outside 1–1000`},
		{name: "priority bounds", cfgs: []plugins.Config{{Name: "wild", Config: json.RawMessage(`1`)}, {Name: "wild", Config: json.RawMessage(`1000`)}},
			wantNames: []string{"wild", "wild"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := registry(t).Build(tt.cfgs)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Build = %v, %v; want error %q", ps, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			var names []string
			for _, p := range ps {
				names = append(names, p.Name())
			}
			if !reflect.DeepEqual(names, tt.wantNames) {
				t.Errorf("built %q, want %q", names, tt.wantNames)
			}
		})
	}
}

func TestDecodeConfig(t *testing.T) {
	type config struct {
		N int      `json:"n"`
		S []string `json:"s"`
	}
	defaults := config{N: 3, S: []string{"d"}}
	tests := []struct {
		name    string
		raw     string
		want    config
		wantErr string
	}{
		{name: "absent", want: defaults},
		{name: "null", raw: " null ", want: defaults},
		{name: "empty object", raw: "{}", want: defaults},
		{name: "one field", raw: `{"n": 0}`, want: config{N: 0, S: []string{"d"}}},
		{name: "both fields", raw: `{"n": 5, "s": []}`, want: config{N: 5, S: []string{}}},
		{name: "unknown field", raw: `{"m": 1}`, wantErr: `unknown field "m" in config`},
		{name: "trailing data", raw: `{"n": 1} x`, wantErr: "config: unexpected data after the object"},
		{name: "not an object", raw: `[1]`, wantErr: "cannot unmarshal array"},
		{name: "syntax", raw: `{"n":`, wantErr: "config: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config{N: defaults.N, S: append([]string(nil), defaults.S...)}
			err := plugins.DecodeConfig(json.RawMessage(tt.raw), &c)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeConfig = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(c, tt.want) {
				t.Errorf("DecodeConfig = %+v, %v; want %+v", c, err, tt.want)
			}
		})
	}
}

func TestTools(t *testing.T) {
	tool := func(name string) tools.Tool {
		return tools.Define(tools.Spec{Name: name}, nil)
	}
	chain := plugins.NewChain(0,
		withTools{fake: &fake{name: "late", priority: 500}, tools: []tools.Tool{tool("c")}},
		&fake{name: "none", priority: 1},
		withTools{fake: &fake{name: "early", priority: 2}, tools: []tools.Tool{tool("a"), tool("b")}},
	)
	var names []string
	for _, tl := range chain.Tools() {
		names = append(names, tl.Spec().Name)
	}
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Tools = %q, want %q", names, want)
	}
}
