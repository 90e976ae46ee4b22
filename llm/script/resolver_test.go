package script

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tack-run/tack/llm"
)

func TestResolver(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), `{"context_window": 4000, "turns": [{"text": "from a"}]}`)
	writeFile(t, filepath.Join(dir, "bad.json"), `{"turns": [{"delay_ms": -1}]}`)
	writeFile(t, filepath.Join(dir, "sub", "b.json"), `{"turns": [{"text": "from b"}]}`)
	if err := os.Symlink("a.json", filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	inline := json.RawMessage(`{"turns": [{"text": "inline"}]}`)

	tests := []struct {
		name     string
		model    string
		inline   json.RawMessage
		wantName string
		window   int64
		text     string // the first answer
	}{
		{"relative path", "script:a.json", nil, "script:a.json", 4000, "from a"},
		{"path in a subdirectory", "script:sub/b.json", nil, "script:sub/b.json", 0, "from b"},
		{"path through .. that stays inside", "script:sub/../sub/b.json", nil, "script:sub/../sub/b.json", 0, "from b"},
		{"symbolic link inside the directory", "script:link.json", nil, "script:link.json", 4000, "from a"},
		{"demo", "script:demo", nil, "script:demo", 8000, "Let me look at the project."},
		{"inline without a name", "", inline, "script:inline", 0, "inline"},
		{"inline with a name", "my-test", inline, "my-test", 0, "inline"},
		{"null inline is none", "script:a.json", json.RawMessage(" null "), "script:a.json", 4000, "from a"},
	}
	r := NewResolver(dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := r.Resolve(tt.model, tt.inline)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if m.Name != tt.wantName || m.ID != tt.wantName || m.ContextWindow != tt.window {
				t.Errorf("model %q (id %q), window %d; want %q, %d", m.Name, m.ID, m.ContextWindow, tt.wantName, tt.window)
			}
			if want := []string{"sleep", "sleep_stubborn", "sleep_immune", "echo", "shell"}; !slices.Equal(m.ProvidesTools, want) {
				t.Errorf("ProvidesTools %q, want %q", m.ProvidesTools, want)
			}
			o := stream(t.Context(), m.Provider.(*Provider), &llm.Request{})
			if o.err != nil || o.resp.Message.GetContent() != tt.text {
				t.Errorf("first answer %s, %v; want %q", summary(o.resp), o.err, tt.text)
			}
		})
	}
}

func TestResolverErrors(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "scripts")
	writeFile(t, filepath.Join(dir, "bad.json"), `{"turns": [{"delay_ms": -1}]}`)
	// A file that parses as a script, outside the directory, and one that
	// does not, whose content must not show in any error.
	outside := filepath.Join(root, "x.json")
	writeFile(t, outside, `{"turns": [{"text": "played from outside"}]}`)
	writeFile(t, filepath.Join(dir, "secret.json"), `{"TACK_JWT_SECRET": "hunter2"}`)
	if err := os.Symlink(outside, filepath.Join(dir, "out.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	const outsideErr = "a script path must be relative and stay inside the script directory"
	tests := []struct {
		name   string
		model  string
		inline json.RawMessage
		want   string
		reason error // errors.Is target besides ErrUnknownModel; nil: no reason
	}{
		{"not a script", "gpt-4o", nil, `unknown model "gpt-4o"`, nil},
		{"missing file", "script:missing.json", nil, "no file missing.json in the script directory", fs.ErrNotExist},
		{"invalid file", "script:bad.json", nil, `unknown model "script:bad.json": script: bad.json is not a valid script (its errors are told for inline scripts only)`, nil},
		{"a file that is no script: not quoted", "script:secret.json", nil, `unknown model "script:secret.json": script: secret.json is not a valid script (its errors are told for inline scripts only)`, nil},
		{"absolute path", "script:" + outside, nil, outsideErr, nil},
		{"/etc/passwd", "script:/etc/passwd", nil, outsideErr, nil},
		{"path that leaves by ..", "script:../x.json", nil, outsideErr, nil},
		{"path that leaves by .. later", "script:sub/../../x.json", nil, outsideErr, nil},
		{"symbolic link out of the directory", "script:out.json", nil, outsideErr, nil},
		{"through a linked directory out of it", "script:up/x.json", nil, outsideErr, nil},
		{"a directory", "script:sub", nil, "script: sub cannot be read", nil},
		{"no path", "script:", nil, "no path after script:", nil},
		{"invalid inline", "", json.RawMessage(`{"turns": [{"tool_calls": [{}]}]}`), `unknown model "script:inline": script: turn 1: tool call 1 has no name`, nil},
	}
	r := NewResolver(dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := r.Resolve(tt.model, tt.inline)
			if m != nil || !errors.Is(err, llm.ErrUnknownModel) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Resolve = %v, %v; want an unknown-model error containing %q", m, err, tt.want)
			}
			if tt.reason != nil && !errors.Is(err, tt.reason) {
				t.Errorf("%v is not %v", err, tt.reason)
			}
			for _, content := range []string{"hunter2", "TACK_JWT_SECRET", "played from outside", "-1"} {
				if strings.Contains(err.Error(), content) {
					t.Errorf("the error %q quotes the file (%q)", err, content)
				}
			}
		})
	}
}

func TestResolverWithoutDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.json"), `{"turns": [{"text": "from a"}]}`)
	t.Chdir(dir)
	r := NewResolver("")
	for _, name := range []string{"script:a.json", "script:" + filepath.Join(dir, "a.json")} {
		if _, err := r.Resolve(name, nil); !errors.Is(err, llm.ErrUnknownModel) || !strings.Contains(err.Error(), "reads no script files") {
			t.Errorf("Resolve(%q) = %v, want: reads no script files", name, err)
		}
	}
	if _, err := r.Resolve("script:demo", nil); err != nil {
		t.Errorf("the built-in demo: %v", err)
	}
}

func TestResolverGivesEachSessionItsOwnPosition(t *testing.T) {
	r := NewResolver("")
	a, err := r.Resolve("script:demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.Resolve("script:demo", nil)
	if a.Provider == b.Provider {
		t.Fatal("two Resolves share a Provider")
	}
}

func TestResolverInChain(t *testing.T) {
	// A missing script file must keep its reason through llm.Chain.
	none := llm.Chain(NewResolver(t.TempDir()))
	_, err := llm.Chain(none, NewResolver(t.TempDir())).Resolve("script:nope.json", nil)
	if !errors.Is(err, llm.ErrUnknownModel) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Chain.Resolve = %v", err)
	}
}
