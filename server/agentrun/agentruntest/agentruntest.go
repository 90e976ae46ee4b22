// Package agentruntest holds the agents that the tests of Tack's agent
// servers (MCP, A2A) run: scripted, so that every answer, delay, approval
// and question is known in advance.
package agentruntest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/approval"
	"github.com/tack-run/tack/plugins/askuser"
)

// The answers the agents give.
const (
	// HelloAnswer is what the agent hello answers, in 4-character chunks.
	HelloAnswer = "Hello there, friend."
	// GuardedAnswer is what guarded says after its echo call.
	GuardedAnswer = "Echoed."
	// CuriousAnswer is what curious says once its question is answered.
	CuriousAnswer = "Noted."
	// CuriousQuestion is what curious asks, with CuriousOptions.
	CuriousQuestion = "Which colour?"
)

// CuriousOptions are the choices of CuriousQuestion.
var CuriousOptions = []string{"red", "blue"}

// scripts are the agents' scripts by file name.
var scripts = map[string]string{
	"hello.json": `{"turns":[{"text":"` + HelloAnswer + `","chunk_size":4,"chunk_delay_ms":2}],"when_exhausted":"repeat_last"}`,
	// slow streams for about 10 s: long enough to be cancelled mid-run.
	"slow.json":    `{"turns":[{"text":"` + longText + `","chunk_size":1,"chunk_delay_ms":50}],"when_exhausted":"repeat_last"}`,
	"guarded.json": `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"ok"}}]},{"text":"` + GuardedAnswer + `"}],"when_exhausted":"repeat_last"}`,
	"curious.json": `{"turns":[{"tool_calls":[{"name":"ask_user","args":{"question":"` + CuriousQuestion + `","options":["red","blue"]}}]},{"text":"` + CuriousAnswer + `"}],"when_exhausted":"repeat_last"}`,
}

// longText is 200 characters.
const longText = "This answer streams one character every fifty milliseconds, so that a caller has all the time it needs to cancel it while it is still streaming. It takes ten seconds in all, which no test waits for."

// Agents are the test agents, their models scripts in the directory that
// Write fills.
func Agents() map[string]tack.Agent {
	return map[string]tack.Agent{
		"hello":   {Description: "Says hello.", Model: "script:hello.json"},
		"slow":    {Description: "Talks slowly.", Model: "script:slow.json"},
		"guarded": {Description: "Echoes once approved.", Model: "script:guarded.json", Plugins: []plugins.Config{{Name: approval.Name, Config: json.RawMessage(`{"tools":["echo"]}`)}}},
		"curious": {Description: "Asks a question.", Model: "script:curious.json", Plugins: []plugins.Config{{Name: askuser.Name}}},
	}
}

// Write writes the agents' scripts into dir.
func Write(t testing.TB, dir string) {
	t.Helper()
	for name, s := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// Options are the runtime options that serve the agents: their scripts
// in a new directory and the agents (hello the default). A runtime
// without the built-in plugins also needs Plugins.
func Options(t testing.TB) []tack.Option {
	dir := t.TempDir()
	Write(t, dir)
	return []tack.Option{tack.WithScriptDir(dir), tack.WithAgents(Agents(), "hello")}
}

// Plugins registers the plugins the agents use.
func Plugins() []tack.Option {
	return []tack.Option{tack.WithPlugins(approval.Name, approval.New), tack.WithPlugins(askuser.Name, askuser.New)}
}

// Config is a config file's text naming the agents, for the tack binary
// run with --script-dir where Write wrote the scripts.
func Config() string {
	b, err := json.Marshal(map[string]any{"agents": map[string]any{
		"hello":   map[string]any{"description": "Says hello.", "model": "script:hello.json"},
		"slow":    map[string]any{"description": "Talks slowly.", "model": "script:slow.json"},
		"guarded": map[string]any{"description": "Echoes once approved.", "model": "script:guarded.json", "plugins": []any{map[string]any{"name": approval.Name, "config": map[string]any{"tools": []string{"echo"}}}}},
		"curious": map[string]any{"description": "Asks a question.", "model": "script:curious.json", "plugins": []any{map[string]any{"name": askuser.Name}}},
	}, "default_agent": "hello"})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Messages is the working history of session id of rt.
func Messages(t testing.TB, rt *tack.Runtime, id string) []*llm.Message {
	t.Helper()
	s, err := rt.Session(id)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// ToolResult is the first tool result of session id of rt ("" when none).
func ToolResult(t testing.TB, rt *tack.Runtime, id string) string {
	t.Helper()
	for _, m := range Messages(t, rt, id) {
		if m.Role == "tool" {
			return m.Content
		}
	}
	return ""
}
