package script

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		js   string
		want string
	}{
		{"not JSON", `{`, "script: unexpected EOF"},
		{"unknown field", `{"turns": [{"delay": 5}]}`, `script: unknown field "delay" in turns[0]`},
		{"data after the object", `{"turns": [{}]} {}`, "script: unexpected data after the object"},
		{"unknown when_exhausted", `{"turns": [{}], "when_exhausted": "loop"}`, `script: unknown when_exhausted "loop" (want repeat_last, error or echo)`},
		{"repeat_last without turns", `{"turns": []}`, "script: when_exhausted repeat_last needs at least one turn"},
		{"negative context window", `{"context_window": -1, "turns": [{}]}`, "script: context_window is negative (-1)"},
		{"negative delay", `{"turns": [{}, {"delay_ms": -5}]}`, "script: turn 2: delay_ms is negative (-5)"},
		{"negative chunk size", `{"turns": [{"chunk_size": -1}]}`, "script: turn 1: chunk_size is negative (-1)"},
		{"negative chunk delay", `{"turns": [{"chunk_delay_ms": -1}]}`, "script: turn 1: chunk_delay_ms is negative (-1)"},
		{"negative stall", `{"turns": [{"stall_ms": -1}]}`, "script: turn 1: stall_ms is negative (-1)"},
		{"negative usage", `{"turns": [{"usage": {"input_tokens": -1, "output_tokens": 2}}]}`, "script: turn 1: usage is negative (-1 input, 2 output tokens)"},
		{"tool call without name", `{"turns": [{}, {"tool_calls": [{"args": {}}]}]}`, "script: turn 2: tool call 1 has no name"},
		{"args not an object", `{"turns": [{"tool_calls": [{"name": "echo", "args": [1]}]}]}`, "script: turn 1: tool call 1 (echo): args must be a JSON object, got [1]"},
		{"not an HTTP status", `{"turns": [{"error": {"status": 42}}]}`, "script: turn 1: error status 42 is not an HTTP status (100-599, or 0 for a transport failure)"},
		{"wrong type", `{"turns": [{"delay_ms": "soon"}]}`, "cannot unmarshal string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(tt.js))
			if err == nil || !strings.Contains(err.Error(), tt.want) || s != nil {
				t.Fatalf("Parse = %v, %v; want error %q", s, err, tt.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		js   string
		want func(*Script) bool
	}{
		{"defaults to repeat_last", `{"turns": [{}]}`, func(s *Script) bool { return s.WhenExhausted == RepeatLast }},
		{"no turns with echo", `{"when_exhausted": "echo"}`, func(s *Script) bool { return len(s.Turns) == 0 }},
		{"context window", `{"context_window": 8000, "turns": [{}]}`, func(s *Script) bool { return s.ContextWindow == 8000 }},
		{"args compacted in order", `{"turns": [{"tool_calls": [{"name": "x", "args": { "b" : 1.50, "a" : [ 1 ] }}]}]}`,
			func(s *Script) bool { return string(s.Turns[0].ToolCalls[0].Args) == `{"b":1.50,"a":[1]}` }},
		{"absent args are {}", `{"turns": [{"tool_calls": [{"name": "x"}]}]}`,
			func(s *Script) bool { return string(s.Turns[0].ToolCalls[0].Args) == `{}` }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s := mustParse(t, tt.js); !tt.want(s) {
				t.Fatalf("Parse(%s) = %+v", tt.js, s)
			}
		})
	}
}

func TestValidateGoScript(t *testing.T) {
	s := &Script{Turns: []Turn{{ToolCalls: []ToolCall{{Name: "echo", Args: []byte(`{"a":`)}}}}}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "args must be a JSON object") {
		t.Fatalf("Validate = %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, good, `{"turns": [{"text": "hi"}]}`)
	writeFile(t, bad, `{"turns": [{"delay_ms": -1}]}`)
	if s, err := Load(good); err != nil || s.Turns[0].Text != "hi" {
		t.Fatalf("Load(good) = %+v, %v", s, err)
	}
	if _, err := Load(bad); err == nil || err.Error() != "script "+bad+": turn 1: delay_ms is negative (-1)" {
		t.Fatalf("Load(bad) = %v", err)
	}
	missing := filepath.Join(dir, "missing.json")
	if _, err := Load(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("Load(missing) = %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
