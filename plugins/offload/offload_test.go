package offload_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/offload"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/workspace"
)

// after returns the after_tool event of call id with content.
func after(session, id, content string, isError bool) *plugins.Event {
	return &plugins.Event{Hook: plugins.AfterTool, Session: session, RunID: "r-1",
		Call:   &eventsv1.ToolCall{Id: id, Name: "shell", Args: &eventsv1.RawJSON{Json: []byte(`{"command":"seq 1 100000"}`)}},
		Result: &tools.Result{Content: content, IsError: isError}}
}

// in makes dir the workspace of ev's session.
func in(dir string, ev *plugins.Event) *plugins.Event {
	ev.Workspace = workspace.Shared(dir)
	return ev
}

// offloaded is where the file of rel (<session>/<call>.txt) is in the
// session's workspace.
func offloaded(rel string) string { return filepath.Join(".tack", "offload", rel) }

// small configures a threshold of 100 characters with a head and tail of 10.
func small(t *testing.T) plugins.Plugin {
	t.Helper()
	p, err := offload.New(json.RawMessage(`{"threshold_tokens": 25, "head_chars": 10, "tail_chars": 10}`))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// marker is the line between head and tail.
func marker(n int, path string) string {
	return fmt.Sprintf("[... %d characters omitted: the full result is in %s; read it with read_file or shell (sed -n, head, tail) ...]", n, path)
}

func TestOffload(t *testing.T) {
	long := "0123456789" + strings.Repeat("x", 81) + "abcdefghij" // 101 characters
	wide := strings.Repeat("é", 50) + strings.Repeat("ü", 51)     // 101 characters, 202 bytes
	tests := []struct {
		name    string
		session string
		id      string
		content string
		isError bool
		file    string // relative to the offload directory
		want    string
	}{
		{name: "over the threshold", session: "s1", id: "c-1", content: long, file: "s1/c-1.txt",
			want: "0123456789\n" + marker(81, "s1/c-1.txt") + "\nabcdefghij"},
		{name: "error kept", session: "s1", id: "c-2", content: long, isError: true, file: "s1/c-2.txt",
			want: "0123456789\n" + marker(81, "s1/c-2.txt") + "\nabcdefghij"},
		{name: "cut on characters", session: "s1", id: "c-3", content: wide, file: "s1/c-3.txt",
			want: strings.Repeat("é", 10) + "\n" + marker(81, "s1/c-3.txt") + "\n" + strings.Repeat("ü", 10)},
		{name: "ids made safe", session: "../s 2", id: "../../etc/passwd", content: long, file: ".._s_2/.._.._etc_passwd.txt",
			want: "0123456789\n" + marker(81, ".._s_2/.._.._etc_passwd.txt") + "\nabcdefghij"},
		{name: "empty ids", content: long, file: "session/call.txt",
			want: "0123456789\n" + marker(81, "session/call.txt") + "\nabcdefghij"},
		{name: "dot ids", session: ".", id: "..", content: long, file: "session/call.txt",
			want: "0123456789\n" + marker(81, "session/call.txt") + "\nabcdefghij"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			got := small(t).Handle(in(dir, after(tt.session, tt.id, tt.content, tt.isError)))
			rel := offloaded(tt.file) // where the session's tools find it
			want := []plugins.Action{
				{Kind: plugins.ReplaceToolResult, Result: strings.ReplaceAll(tt.want, tt.file, rel), IsError: tt.isError},
				{Kind: plugins.Emit, Event: &eventsv1.LargeResultOffloaded{Tool: "shell", CallId: tt.id, Path: rel, Bytes: int64(len(tt.content))}},
			}
			equalActions(t, got, want)
			checkFile(t, filepath.Join(dir, rel), tt.content)
		})
	}
}

func TestUnderThreshold(t *testing.T) {
	tests := []struct {
		name    string
		content string
	}{
		{name: "empty"},
		{name: "at the threshold", content: strings.Repeat("x", 100)},
		{name: "more bytes but not more characters", content: strings.Repeat("é", 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if got := small(t).Handle(in(dir, after("s1", "c-1", tt.content, false))); got != nil {
				t.Errorf("Handle = %+v, want nil", got)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("dir holds %v, want nothing", entries)
			}
		})
	}
}

func TestSameCallIDTwice(t *testing.T) {
	dir := t.TempDir()
	p := small(t)
	for i, name := range []string{"c-1.txt", "c-1-2.txt", "c-1-3.txt"} {
		content := strings.Repeat(fmt.Sprint(i), 200)
		got := p.Handle(in(dir, after("s1", "c-1", content, false)))
		rel := offloaded(filepath.Join("s1", name))
		if len(got) != 2 || got[1].Event.(*eventsv1.LargeResultOffloaded).Path != rel {
			t.Fatalf("call %d: Handle = %+v, want a file at %s", i, got, rel)
		}
		checkFile(t, filepath.Join(dir, rel), content)
	}
}

func TestWriteFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got := small(t).Handle(in(dir, after("s1", "c-1", strings.Repeat("x", 101), false)))
	if len(got) != 1 || got[0].Kind != plugins.Emit || got[0].Name != "offload_failed" || got[0].Event != nil {
		t.Fatalf("Handle = %+v, want one offload_failed emit", got)
	}
	var payload map[string]string
	if err := json.Unmarshal(got[0].Payload, &payload); err != nil {
		t.Fatalf("payload %s: %v", got[0].Payload, err)
	}
	if payload["tool"] != "shell" || payload["call_id"] != "c-1" || !strings.Contains(payload["error"], "not a directory") || len(payload) != 3 {
		t.Errorf("payload = %v", payload)
	}
}

// TestStaysInTheWorkspace: a link in the workspace that leads out of it
// (a session's shell can make one) fails the offload, and nothing is
// written where it points: the server writes files, not the sandbox.
func TestStaysInTheWorkspace(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, ".tack")); err != nil {
		t.Fatal(err)
	}
	got := small(t).Handle(in(dir, after("s1", "c-1", strings.Repeat("x", 101), false)))
	if len(got) != 1 || got[0].Name != "offload_failed" {
		t.Errorf("Handle = %+v, want one offload_failed emit", got)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the directory the link points at holds %v, want nothing", entries)
	}
}

func TestIgnores(t *testing.T) {
	p := small(t)
	big := after("s1", "c-1", strings.Repeat("x", 1000), false)
	for _, ev := range []*plugins.Event{
		{Hook: plugins.AfterTool, Call: big.Call},
		{Hook: plugins.AfterTool, Result: big.Result},
		{Hook: plugins.OnToolError, Call: big.Call, Result: big.Result},
	} {
		if got := p.Handle(ev); got != nil {
			t.Errorf("Handle(%+v) = %+v, want nil", ev, got)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		wantErr string
	}{
		{name: "absent"},
		{name: "all fields", config: `{"threshold_tokens": 2, "head_chars": 0, "tail_chars": 7, "priority": 1}`},
		{name: "unknown field", config: `{"threshold": 5}`, wantErr: `unknown field "threshold"`},
		{name: "zero threshold", config: `{"threshold_tokens": 0}`, wantErr: "threshold_tokens is 0"},
		// The runtime chooses where files go, not a session's configuration:
		// a user's session could write anywhere the server may.
		{name: "a directory", config: `{"dir": "/etc"}`, wantErr: `unknown field "dir"`},
		{name: "negative head", config: `{"head_chars": -1}`, wantErr: "want at least 0"},
		{name: "preview as long as the threshold", config: `{"threshold_tokens": 10, "head_chars": 20, "tail_chars": 20}`,
			wantErr: "head_chars + tail_chars is 40"},
		{name: "bad priority", config: `{"priority": 0}`, wantErr: "priority 0 is outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := offload.New(json.RawMessage(tt.config))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if p.Name() != "large_result_offload" || !reflect.DeepEqual(p.Hooks(), []plugins.Hook{plugins.AfterTool}) {
					t.Errorf("Name, Hooks = %q, %v", p.Name(), p.Hooks())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New = %v; want an error containing %q", err, tt.wantErr)
			}
		})
	}
	want := offload.Config{ThresholdTokens: 20000, HeadChars: 2000, TailChars: 2000, Priority: 300}
	if d := offload.DefaultConfig(); d != want {
		t.Errorf("DefaultConfig = %+v, want %+v", d, want)
	}
}

// TestWithoutWorkspace: a runtime whose tools have no workspace gets its
// files in the temporary directory, named by their absolute path.
func TestWithoutWorkspace(t *testing.T) {
	session := fmt.Sprintf("offload-test-%d", os.Getpid())
	got := small(t).Handle(after(session, "c-1", strings.Repeat("x", 101), false))
	want := filepath.Join(os.TempDir(), "tack-offload", session, "c-1.txt")
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(want)) })
	if len(got) != 2 || got[1].Event.(*eventsv1.LargeResultOffloaded).Path != want {
		t.Fatalf("Handle = %+v, want a file at %s", got, want)
	}
	checkFile(t, want, strings.Repeat("x", 101))
}

// equalActions compares actions, their events with proto.Equal.
func equalActions(t *testing.T, got, want []plugins.Action) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("actions = %+v, want %+v", got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if !proto.Equal(g.Event, w.Event) {
			t.Errorf("action %d event = %v, want %v", i, g.Event, w.Event)
		}
		g.Event, w.Event = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("action %d = %+v, want %+v", i, g, w)
		}
	}
}

// checkFile checks that path holds content and only its owner may read it.
func checkFile(t *testing.T, path, content string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if string(data) != content {
		t.Errorf("%s holds %q, want %q", path, data, content)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, %v; want 0600", path, fi.Mode(), err)
	}
}
