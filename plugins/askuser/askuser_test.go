package askuser_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/askuser"
	"github.com/tack-run/tack/tools"
)

// before returns the before_tool event of a call to tool with args.
func before(tool, args string) *plugins.Event {
	return &plugins.Event{Hook: plugins.BeforeTool, Session: "s1", RunID: "r-1",
		Call: &eventsv1.ToolCall{Id: "c-1", Name: tool, Args: &eventsv1.RawJSON{Json: []byte(args)}}}
}

func mustNew(t *testing.T, config string) plugins.Plugin {
	t.Helper()
	p, err := askuser.New(json.RawMessage(config))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func TestHandle(t *testing.T) {
	tests := []struct {
		name string
		ev   *plugins.Event
		want []plugins.Action
	}{
		{name: "question", ev: before("ask_user", `{"question": "Which branch?"}`),
			want: []plugins.Action{{Kind: plugins.Ask, Text: "Which branch?"}}},
		{name: "question with options", ev: before("ask_user", `{"question": "Deploy?", "options": ["yes", "no"]}`),
			want: []plugins.Action{{Kind: plugins.Ask, Text: "Deploy?", Options: []string{"yes", "no"}}}},
		{name: "other tool", ev: before("shell", `{"command": "ls"}`)},
		{name: "other hook", ev: &plugins.Event{Hook: plugins.AfterTool, Call: before("ask_user", `{"question": "q"}`).Call}},
		{name: "no call", ev: &plugins.Event{Hook: plugins.BeforeTool}},
		{name: "args not JSON", ev: before("ask_user", `{`),
			want: []plugins.Action{{Kind: plugins.BlockTool, Reason: "invalid arguments: unexpected end of JSON input"}}},
		{name: "empty question", ev: before("ask_user", `{"options": ["a"]}`),
			want: []plugins.Action{{Kind: plugins.BlockTool, Reason: "invalid arguments: question is empty"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustNew(t, "").Handle(tt.ev); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Handle = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestToolSchema(t *testing.T) {
	p := mustNew(t, "")
	tp, ok := p.(plugins.ToolProvider)
	if !ok {
		t.Fatal("the plugin is not a ToolProvider")
	}
	ts := tp.Tools()
	if len(ts) != 1 || ts[0].Spec().Name != "ask_user" || ts[0].Spec().Kind != tools.Killable {
		t.Fatalf("Tools = %+v, want the killable ask_user", ts)
	}
	set, err := tools.NewSet(ts...)
	if err != nil {
		t.Fatalf("NewSet: %v", err)
	}
	tests := []struct {
		name  string
		args  string
		valid bool
	}{
		{name: "question", args: `{"question": "q"}`, valid: true},
		{name: "question and options", args: `{"question": "q", "options": ["a", "b"]}`, valid: true},
		{name: "no question", args: `{"options": ["a"]}`},
		{name: "empty question", args: `{"question": ""}`},
		{name: "options not strings", args: `{"question": "q", "options": [1]}`},
		{name: "unknown argument", args: `{"question": "q", "timeout": 5}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := set.Validate("ask_user", json.RawMessage(tt.args)); (err == nil) != tt.valid {
				t.Errorf("Validate(%s) = %v, want valid %v", tt.args, err, tt.valid)
			}
		})
	}
}

func TestToolRunRefuses(t *testing.T) {
	out, err := askuser.Tool().Run(context.Background(), json.RawMessage(`{"question": "q"}`), func(string) {})
	if out != "" || !errors.Is(err, askuser.ErrAnsweredByPerson) || err.Error() != "ask_user is answered by a person through respond" {
		t.Errorf("Run = %q, %v", out, err)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		priority int
		wantErr  string
	}{
		{name: "absent", priority: 10},
		{name: "priority", config: `{"priority": 500}`, priority: 500},
		{name: "unknown field", config: `{"timeout_ms": 5}`, wantErr: `unknown field "timeout_ms"`},
		{name: "bad priority", config: `{"priority": 0}`, wantErr: "priority 0 is outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := askuser.New(json.RawMessage(tt.config))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if p.Name() != "ask_user" || p.Priority() != tt.priority || !reflect.DeepEqual(p.Hooks(), []plugins.Hook{plugins.BeforeTool}) {
					t.Errorf("Name, Priority, Hooks = %q, %d, %v", p.Name(), p.Priority(), p.Hooks())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New = %v; want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
