package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools/a2a"
	"github.com/tack-run/tack/tools/mcp"
)

// Config is the models configuration of docs/protocol.md#configuration-and-storage.
type Config struct {
	// DefaultModel names the model sessions get when they name none:
	// "provider/model", or a bare model name.
	DefaultModel string `json:"default_model,omitempty"`
	// Providers maps provider names to servers.
	Providers map[string]*Provider `json:"providers"`
	// MCPServers maps names to MCP servers whose tools sessions may use
	// (docs/mcp.md).
	MCPServers map[string]mcp.ServerConfig `json:"mcp_servers,omitempty"`
	// Agents maps names to session templates (docs/protocol.md#agents).
	Agents map[string]*Agent `json:"agents,omitempty"`
	// A2AAgents maps names to remote A2A agents, each the tool
	// a2a:<name> (docs/a2a.md).
	A2AAgents map[string]a2a.Agent `json:"a2a_agents,omitempty"`
	// DefaultAgent names the default of Agents; empty leaves the choice to
	// the runtime (demo, else the only agent).
	DefaultAgent string `json:"default_agent,omitempty"`
}

// Agent is a named session template: each field has create_session's
// meaning.
type Agent struct {
	Description string             `json:"description,omitempty"`
	Model       string             `json:"model,omitempty"`
	System      string             `json:"system,omitempty"`
	Tools       []string           `json:"tools,omitempty"`
	Plugins     []Plugin           `json:"plugins,omitempty"`
	Context     *llm.ContextConfig `json:"context,omitempty"`
	Subagents   *Subagents         `json:"subagents,omitempty"`
}

// Plugin is one plugin of an agent, with its own configuration.
type Plugin struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config,omitempty"`
}

// Subagents is an agent's sub-agent options (create_session's
// "subagents").
type Subagents struct {
	MaxDepth       *int     `json:"max_depth,omitempty"`
	Model          string   `json:"model,omitempty"`
	Tools          []string `json:"tools,omitempty"`
	InheritPlugins *bool    `json:"inherit_plugins,omitempty"`
}

// Provider is one OpenAI-compatible server.
type Provider struct {
	// BaseURL is the URL "/chat/completions" is appended to, such as
	// "http://127.0.0.1:8000/v1".
	BaseURL string `json:"base_url"`
	// APIKeyEnv names the environment variable holding the API key; empty
	// for servers that want none.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// ContextWindow is the window of the provider's models that set none,
	// in tokens; 0 leaves it to the built-in table.
	ContextWindow int64 `json:"context_window,omitempty"`
	// Models lists the provider's models, with their settings. In the file
	// it is an object of names to settings, or a plain list of names.
	Models Models `json:"models,omitempty"`
}

// Models maps model names, as the server knows them, to their settings.
type Models map[string]*Model

// Model holds the settings of one model.
type Model struct {
	// ContextWindow is the model's window in tokens; 0 leaves it to the
	// provider or the built-in table.
	ContextWindow int64 `json:"context_window,omitempty"`
	// Cost is the model's price; nil when not configured (free, as far as
	// Tack can tell).
	Cost *Cost `json:"cost,omitempty"`
}

// Cost is a price in dollars per million tokens.
type Cost struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CachedInput is the price of cached input tokens; when absent from
	// the file, Parse sets it to Input (no discount known).
	CachedInput *float64 `json:"cached_input,omitempty"`
}

// Load reads, parses and validates the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse parses and validates a configuration. Unknown fields are errors,
// so that a misspelt one does not go unnoticed.
func Parse(data []byte) (*Config, error) {
	var c Config
	if err := decodeStrict(data, &c); err != nil {
		return nil, located(data, err)
	}
	c.fillDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// decodeStrict decodes one JSON value from data into v, rejecting unknown
// fields and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the configuration object")
	}
	return nil
}

// located adds the line and column to JSON syntax and type errors in data.
func located(data []byte, err error) error {
	var offset int64
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset - 1 // the offending byte was the last read
	case errors.As(err, &typ):
		offset = typ.Offset
	default:
		return err
	}
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	if typ != nil {
		return fmt.Errorf("line %d, column %d: %s cannot be a %s", line, col, typ.Field, typ.Value)
	}
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// fillDefaults sets the cached-input price of costs that give none.
func (c *Config) fillDefaults() {
	for _, p := range c.Providers {
		if p == nil {
			continue
		}
		for _, m := range p.Models {
			if m != nil && m.Cost != nil && m.Cost.CachedInput == nil {
				input := m.Cost.Input
				m.Cost.CachedInput = &input
			}
		}
	}
}

// UnmarshalJSON reads models as an object of names to settings, or as a
// list of names.
func (ms *Models) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*ms = nil
		return nil
	case len(data) > 0 && data[0] == '[':
		var names []string
		if err := json.Unmarshal(data, &names); err != nil {
			return errors.New("models must be an object of names to settings, or a list of names")
		}
		out := make(Models, len(names))
		for _, n := range names {
			if _, dup := out[n]; dup {
				return fmt.Errorf("models lists %q twice", n)
			}
			out[n] = &Model{}
		}
		*ms = out
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return errors.New("models must be an object of names to settings, or a list of names")
	}
	out := make(Models, len(raw))
	for n, r := range raw {
		m := &Model{}
		if err := decodeStrict(r, m); err != nil {
			return fmt.Errorf("model %q: %w", n, unlocated(err))
		}
		out[n] = m
	}
	*ms = out
	return nil
}

// unlocated drops the position of an error found in a fragment, which
// would be relative to the fragment, not to the file.
func unlocated(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) {
		return syntax
	}
	if errors.As(err, &typ) {
		return fmt.Errorf("%s cannot be a %s", typ.Field, typ.Value)
	}
	return err
}
