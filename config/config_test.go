package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools/a2a"
	"github.com/tack-run/tack/tools/mcp"
)

// equal reports a test error when got and want differ.
func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %#v\n want %#v", what, got, want)
	}
}

// protocolExample is the example of docs/protocol.md#configuration-and-storage.
const protocolExample = `{
  "default_model": "local/qwen3-8b",
  "providers": {
    "local": {
      "base_url": "http://127.0.0.1:8000/v1",
      "api_key_env": "LOCAL_API_KEY",
      "context_window": 32000,
      "models": {
        "qwen3-8b": {"context_window": 40000, "cost": {"input": 0.10, "output": 0.20, "cached_input": 0.05}},
        "llama-3.1-8b": {}
      }
    }
  }
}`

func f(v float64) *float64 { return &v }

// TestParse reads both forms of models and the protocol's example.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		json string
		want *Config
	}{
		{
			name: "protocol example",
			json: protocolExample,
			want: &Config{DefaultModel: "local/qwen3-8b", Providers: map[string]*Provider{
				"local": {BaseURL: "http://127.0.0.1:8000/v1", APIKeyEnv: "LOCAL_API_KEY", ContextWindow: 32000, Models: Models{
					"qwen3-8b":     {ContextWindow: 40000, Cost: &Cost{Input: 0.10, Output: 0.20, CachedInput: f(0.05)}},
					"llama-3.1-8b": {},
				}},
			}},
		},
		{
			name: "agents only",
			json: `{"agents": {"researcher": {"description": "Finds things out.", "model": "script:r.json", "system": "Be careful.",
				"tools": ["echo"], "plugins": [{"name": "approval", "config": {"tools": ["echo"]}}],
				"context": {"max_messages": 40}, "subagents": {"max_depth": 2, "tools": ["echo"]}},
				"writer": {}}, "default_agent": "writer"}`,
			want: &Config{DefaultAgent: "writer", Agents: map[string]*Agent{
				"researcher": {Description: "Finds things out.", Model: "script:r.json", System: "Be careful.", Tools: []string{"echo"},
					Plugins: []Plugin{{Name: "approval", Config: json.RawMessage(`{"tools": ["echo"]}`)}},
					Context: &llm.ContextConfig{MaxMessages: 40}, Subagents: &Subagents{MaxDepth: new(2), Tools: []string{"echo"}}},
				"writer": {},
			}},
		},
		{
			name: "A2A agents",
			json: `{"a2a_agents": {"remote": {"url": "http://h:7700/a2a/x", "token_env": "REMOTE_TOKEN"}}}`,
			want: &Config{A2AAgents: map[string]a2a.Agent{"remote": {URL: "http://h:7700/a2a/x", TokenEnv: "REMOTE_TOKEN"}}},
		},
		{
			name: "MCP servers",
			json: `{"providers": {"a": {"base_url": "http://x/v1"}}, "mcp_servers": {
				"fs": {"command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"], "env": {"DEBUG": "1"}},
				"search": {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer t"}}}}`,
			want: &Config{Providers: map[string]*Provider{"a": {BaseURL: "http://x/v1"}}, MCPServers: map[string]mcp.ServerConfig{
				"fs":     {Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"}, Env: map[string]string{"DEBUG": "1"}},
				"search": {URL: "http://127.0.0.1:9000/mcp", Headers: map[string]string{"Authorization": "Bearer t"}},
			}},
		},
		{
			name: "models as a list",
			json: `{"providers": {"ollama": {"base_url": "http://127.0.0.1:11434/v1", "models": ["qwen3:8b", "llama3.1:8b"]}}}`,
			want: &Config{Providers: map[string]*Provider{
				"ollama": {BaseURL: "http://127.0.0.1:11434/v1", Models: Models{"qwen3:8b": {}, "llama3.1:8b": {}}},
			}},
		},
		{
			name: "no models, cost without cached_input",
			json: `{"providers": {"openai": {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY", "models": {"gpt-4o": {"cost": {"input": 2.5, "output": 10}}}}, "vllm": {"base_url": "http://127.0.0.1:8000/v1"}}}`,
			want: &Config{Providers: map[string]*Provider{
				"openai": {BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY", Models: Models{"gpt-4o": {Cost: &Cost{Input: 2.5, Output: 10, CachedInput: f(2.5)}}}},
				"vllm":   {BaseURL: "http://127.0.0.1:8000/v1"},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.json))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			equal(t, "config", got, tt.want)
		})
	}
}

// TestParseErrors checks that each mistake is reported where it is.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		json string
		errs []string // each must appear in the error
	}{
		{"syntax", "{\n  \"providers\": {,\n}", []string{"line 2, column 17", "invalid character ','"}},
		{"unknown field", `{"providers": {"a": {"base_url": "http://x/v1", "base_ur": "x"}}}`, []string{`unknown field "base_ur"`}},
		{"unknown model field", `{"providers": {"a": {"base_url": "http://x/v1", "models": {"m": {"window": 1}}}}}`, []string{`model "m"`, `unknown field "window"`}},
		{"wrong type", `{"providers": {"a": {"base_url": "http://x/v1", "context_window": "big"}}}`, []string{"line 1, column 72: providers.context_window cannot be a string"}},
		{"wrong model type", `{"providers": {"a": {"base_url": "http://x/v1", "models": {"m": {"cost": 1}}}}}`, []string{`model "m": cost cannot be a number`}},
		{"models of the wrong kind", `{"providers": {"a": {"base_url": "http://x/v1", "models": "m"}}}`, []string{"models must be an object of names to settings, or a list of names"}},
		{"model listed twice", `{"providers": {"a": {"base_url": "http://x/v1", "models": ["m", "m"]}}}`, []string{`models lists "m" twice`}},
		{"trailing data", `{"providers": {"a": {"base_url": "http://x/v1"}}} {}`, []string{"unexpected data after the configuration object"}},
		{"no providers", `{}`, []string{"providers: none defined (a file with only mcp_servers"}},
		{"missing base_url", `{"providers": {"a": {}}}`, []string{"providers.a.base_url: missing"}},
		{"relative base_url", `{"providers": {"a": {"base_url": "localhost:8000/v1"}}}`, []string{`providers.a.base_url: "localhost:8000/v1" is not an absolute http or https URL`}},
		{"key instead of variable", `{"providers": {"a": {"base_url": "http://x/v1", "api_key_env": "sk-proj-abc"}}}`, []string{`providers.a.api_key_env: "sk-proj-abc" is not an environment variable name`}},
		{"slash in provider name", `{"providers": {"a/b": {"base_url": "http://x/v1"}}}`, []string{`providers.a/b: a provider name cannot contain "/"`}},
		{"null provider", `{"providers": {"a": null}}`, []string{"providers.a: null instead of an object"}},
		{"negative windows", `{"providers": {"a": {"base_url": "http://x/v1", "context_window": -1, "models": {"m": {"context_window": -2}}}}}`, []string{"providers.a.context_window: -1 is negative", "providers.a.models.m.context_window: -2 is negative"}},
		{"negative cost", `{"providers": {"a": {"base_url": "http://x/v1", "models": {"m": {"cost": {"input": -1}}}}}}`, []string{"providers.a.models.m.cost: prices cannot be negative"}},
		{"empty model name", `{"providers": {"a": {"base_url": "http://x/v1", "models": [""]}}}`, []string{"providers.a.models.: a model has an empty name"}},
		{"unknown default", `{"default_model": "b/m", "providers": {"a": {"base_url": "http://x/v1", "models": ["m"]}}}`, []string{`default_model: no such model: no provider has a model "b/m"`}},
		{"ambiguous default", `{"default_model": "m", "providers": {"a": {"base_url": "http://x/v1", "models": ["m"]}, "b": {"base_url": "http://y/v1", "models": ["m"]}}}`, []string{`default_model: model "m" is ambiguous: name one of a/m, b/m`}},
		{"MCP server with neither command nor url", `{"providers": {"a": {"base_url": "http://x/v1"}}, "mcp_servers": {"fs": {}}}`, []string{`mcp_servers.fs: needs "command" (a program to start) or "url" (a streamable HTTP endpoint)`}},
		{"MCP server with both", `{"providers": {"a": {"base_url": "http://x/v1"}}, "mcp_servers": {"fs": {"command": ["x"], "url": "http://h/mcp"}}}`, []string{`mcp_servers.fs: has both "command" and "url"; give one`}},
		{"MCP server name with a slash", `{"providers": {"a": {"base_url": "http://x/v1"}}, "mcp_servers": {"a/b": {"command": ["x"]}}}`, []string{`mcp_servers.a/b: the name must be 1 to 32 letters, digits, '_' or '-'`}},
		{"MCP url not http", `{"providers": {"a": {"base_url": "http://x/v1"}}, "mcp_servers": {"s": {"url": "ftp://h/mcp", "env": {"A": "1"}}}}`, []string{`mcp_servers.s: "url" "ftp://h/mcp" is not an http:// or https:// URL`, `mcp_servers.s: "env" applies to "command" servers only`}},
		{"MCP unknown field", `{"providers": {"a": {"base_url": "http://x/v1"}}, "mcp_servers": {"s": {"cmd": ["x"]}}}`, []string{`unknown field "cmd"`}},
		{"agent name with a slash", `{"agents": {"a/b": {}}}`, []string{`agents: "a/b" is not an agent name: a name is 1-64 characters`}},
		{"agent null", `{"agents": {"a": null}}`, []string{`agents.a: null instead of an object`}},
		{"agent plugin without a name", `{"agents": {"a": {"plugins": [{}]}}}`, []string{`agents.a.plugins[0]: a plugin needs a name`}},
		{"agent unknown field", `{"agents": {"a": {"tool": ["echo"]}}}`, []string{`unknown field "tool"`}},
		{"A2A agent without a URL", `{"a2a_agents": {"r": {}}}`, []string{`a2a_agents.r: "url" "" is not an http:// or https:// URL`}},
		{"default agent unknown", `{"agents": {"a": {}}, "default_agent": "b"}`, []string{`default_agent: "b" is not one of agents`}},
		{"several problems at once", `{"providers": {"a": {}, "b": {"base_url": "ftp://x"}}}`, []string{"providers.a.base_url: missing", `providers.b.base_url: "ftp://x" is not an absolute http or https URL`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.json))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			for _, want := range tt.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// TestLoad names the file in its errors.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(protocolExample), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"providers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(good)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	equal(t, "default model", c.DefaultModel, "local/qwen3-8b")
	_, err = Load(bad)
	equal(t, "error", err.Error(), bad+": providers: none defined (a file with only mcp_servers or agents takes its models from the environment, as with no file)")
	_, err = Load(filepath.Join(dir, "missing.json"))
	if err == nil || !os.IsNotExist(errorsUnwrapAll(err)) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// errorsUnwrapAll returns the innermost error.
func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}
