package approval_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/approval"
)

// call returns a before_tool event for tool with args.
func call(tool, args string) *plugins.Event {
	return &plugins.Event{Hook: plugins.BeforeTool, Session: "s1", RunID: "r-1",
		Call: &eventsv1.ToolCall{Id: "c-1", Name: tool, Args: &eventsv1.RawJSON{Json: []byte(args)}}}
}

// shell returns a before_tool event for a shell call of cmd.
func shell(cmd string) *plugins.Event {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return call("shell", string(args))
}

// hold is the action expected with the default timeout.
func hold(hint, family string) []plugins.Action {
	return []plugins.Action{{Kind: plugins.HoldForApproval, Hint: hint, Family: family, Timeout: 120 * time.Second}}
}

func mustNew(t *testing.T, config string) plugins.Plugin {
	t.Helper()
	p, err := approval.New(json.RawMessage(config))
	if err != nil {
		t.Fatalf("New(%s): %v", config, err)
	}
	return p
}

func TestHandle(t *testing.T) {
	const safe = `{"safe_commands": ["ls", "wc -l", "cat"]}`
	tests := []struct {
		name   string
		config string
		ev     *plugins.Event
		want   []plugins.Action
	}{
		{name: "shell command held", ev: shell("rm -rf build"), want: hold("shell: rm -rf build", "rm")},
		{name: "env assignments make the family the whole command", ev: shell("LD_PRELOAD=./x.so BAR_2=x ls"),
			want: hold("shell: LD_PRELOAD=./x.so BAR_2=x ls", "LD_PRELOAD=./x.so BAR_2=x ls")},
		{name: "only assignments", ev: shell("FOO=1"), want: hold("shell: FOO=1", "FOO=1")},
		{name: "not an assignment", ev: shell("=x ls"), want: hold("shell: =x ls", "=x")},
		{name: "multi-line hint on one line, its line break shown", ev: shell("  echo a\n\techo b  "),
			want: hold(`shell: echo a\n echo b`, "echo a\n\techo b")},
		{name: "safe command", config: safe, ev: shell("ls -la")},
		{name: "safe command alone", config: safe, ev: shell("  ls  ")},
		{name: "safe prefix of two words", config: safe, ev: shell("wc -l a.txt")},
		{name: "safe prefix is whole words", config: safe, ev: shell("lsof -i"), want: hold("shell: lsof -i", "lsof")},
		{name: "second word differs", config: safe, ev: shell("git push"), want: hold("shell: git push", "git")},
		{name: "assignment before a safe command", config: safe, ev: shell("PATH=/tmp ls"),
			want: hold("shell: PATH=/tmp ls", "PATH=/tmp ls")},
		{name: "semicolon", config: safe, ev: shell("ls; rm -rf /"), want: hold("shell: ls; rm -rf /", "ls; rm -rf /")},
		{name: "and", config: safe, ev: shell("ls && rm x"), want: hold("shell: ls && rm x", "ls && rm x")},
		{name: "or", config: safe, ev: shell("ls || rm x"), want: hold("shell: ls || rm x", "ls || rm x")},
		{name: "pipe", config: safe, ev: shell("cat f | sh"), want: hold("shell: cat f | sh", "cat f | sh")},
		{name: "background", config: safe, ev: shell("ls & rm x"), want: hold("shell: ls & rm x", "ls & rm x")},
		{name: "backticks", config: safe, ev: shell("ls `rm x`"), want: hold("shell: ls `rm x`", "ls `rm x`")},
		{name: "substitution", config: safe, ev: shell("ls $(rm x)"), want: hold("shell: ls $(rm x)", "ls $(rm x)")},
		{name: "redirection", config: safe, ev: shell("cat a > b"), want: hold("shell: cat a > b", "cat a > b")},
		{name: "line break", config: safe, ev: shell("ls\nrm x"), want: hold(`shell: ls\nrm x`, "ls\nrm x")},
		{name: "other tool held with the whole tool as family", config: `{"tools": ["shell", "write_file"]}`,
			ev:   call("write_file", `{"path": "a.txt", "content": "hi"}`),
			want: hold(`write_file: {"path":"a.txt","content":"hi"}`, "")},
		{name: "unlisted tool", ev: call("write_file", `{"path": "a.txt"}`)},
		{name: "shell not listed", config: `{"tools": ["write_file"]}`, ev: shell("rm -rf /")},
		{name: "unreadable shell args", ev: call("shell", `{"cmd": "ls"}`),
			want: hold(`shell: {"cmd":"ls"}`, `{"cmd":"ls"}`)},
		{name: "other hook", ev: &plugins.Event{Hook: plugins.AfterTool, Call: shell("rm x").Call}},
		{name: "no call", ev: &plugins.Event{Hook: plugins.BeforeTool}},
		{name: "timeout and auto_resume", config: `{"timeout_ms": 1500, "auto_resume": true}`, ev: shell("rm x"),
			want: []plugins.Action{{Kind: plugins.HoldForApproval, Hint: "shell: rm x", Family: "rm",
				Timeout: 1500 * time.Millisecond, AutoResume: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustNew(t, tt.config).Handle(tt.ev)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Handle = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestHintIsCut(t *testing.T) {
	got := mustNew(t, "").Handle(shell("echo " + strings.Repeat("é", 300)))
	if len(got) != 1 {
		t.Fatalf("Handle = %+v, want one hold", got)
	}
	// "shell: echo " and 300 é are 312 characters: 200 shown, 112 cut.
	if want := "shell: echo " + strings.Repeat("é", 188) + "… [+112 chars]"; got[0].Hint != want {
		t.Errorf("hint = %q, want %q", got[0].Hint, want)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		wantErr string
	}{
		{name: "absent"},
		{name: "null", config: "null"},
		{name: "empty object", config: "{}"},
		{name: "all fields", config: `{"tools": ["shell"], "safe_commands": ["ls"], "timeout_ms": 1, "auto_resume": true, "priority": 1000}`},
		{name: "no tools", config: `{"tools": []}`},
		{name: "unknown field", config: `{"tool": ["shell"]}`, wantErr: `unknown field "tool"`},
		{name: "trailing data", config: `{} {}`, wantErr: "unexpected data"},
		{name: "wrong type", config: `{"timeout_ms": "1s"}`, wantErr: "cannot unmarshal"},
		{name: "empty tool", config: `{"tools": [" "]}`, wantErr: "tool name is empty"},
		{name: "empty safe command", config: `{"safe_commands": [""]}`, wantErr: "command is empty"},
		{name: "compound safe command", config: `{"safe_commands": ["ls | sh"]}`, wantErr: "has a shell operator"},
		{name: "zero timeout", config: `{"timeout_ms": 0}`, wantErr: "timeout_ms is 0"},
		{name: "priority too low", config: `{"priority": 0}`, wantErr: "priority 0 is outside"},
		{name: "priority too high", config: `{"priority": 1001}`, wantErr: "priority 1001 is outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := approval.New(json.RawMessage(tt.config))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New = %v, %v; want an error containing %q", p, err, tt.wantErr)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	p := mustNew(t, "")
	if p.Name() != approval.Name || p.Name() != "approval" || p.Priority() != 100 ||
		!reflect.DeepEqual(p.Hooks(), []plugins.Hook{plugins.BeforeTool}) {
		t.Errorf("Name, Priority, Hooks = %q, %d, %v", p.Name(), p.Priority(), p.Hooks())
	}
	if got := mustNew(t, `{"priority": 7}`).Priority(); got != 7 {
		t.Errorf("Priority = %d, want 7", got)
	}
	if d := approval.DefaultConfig(); !reflect.DeepEqual(d, approval.Config{Tools: []string{"shell"}, TimeoutMS: 120000, Priority: 100}) {
		t.Errorf("DefaultConfig = %+v", d)
	}
}
