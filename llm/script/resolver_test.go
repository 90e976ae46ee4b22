package script

import (
	"encoding/json"
	"errors"
	"io/fs"
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
	other := t.TempDir()
	abs := filepath.Join(other, "b.json")
	writeFile(t, abs, `{"turns": [{"text": "from b"}]}`)
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
		{"absolute path", "script:" + abs, nil, "script:" + abs, 0, "from b"},
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
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.json"), `{"turns": [{"delay_ms": -1}]}`)
	tests := []struct {
		name   string
		model  string
		inline json.RawMessage
		want   string
		reason error // errors.Is target besides ErrUnknownModel; nil: no reason
	}{
		{"not a script", "gpt-4o", nil, `unknown model "gpt-4o"`, nil},
		{"missing file", "script:missing.json", nil, "no such file or directory", fs.ErrNotExist},
		{"invalid file", "script:bad.json", nil, "turn 1: delay_ms is negative (-1)", nil},
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
		})
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
