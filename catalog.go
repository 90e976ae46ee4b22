package tack

import (
	"slices"
	"strings"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/mcp"
)

// Catalog is what a session can be created with: the models a person
// would pick from a list, the tools and the plugins. A model chooser (the
// browser UI's, `GET /v1/catalog`) shows it; create_session accepts more
// than it lists (any script:<path>).
type Catalog struct {
	// Models are the listed models, the default first.
	Models []ModelInfo `json:"models"`
	// Tools are every tool a session may name, sorted by name; an MCP
	// server is one entry, "mcp:<server>" (its tools are known once it
	// runs).
	Tools []ToolInfo `json:"tools"`
	// Plugins are the names of the plugins a session may configure, sorted.
	Plugins []string `json:"plugins"`
	// Agents are the named agents (WithAgents), sorted by name.
	Agents []AgentInfo `json:"agents"`
	// DefaultAgent names the default agent; "" when there is none.
	DefaultAgent string `json:"default_agent"`
}

// AgentInfo is one listed agent.
type AgentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Model is the agent's model; "" for the configured default.
	Model string `json:"model"`
	// Tools are the tools the agent names.
	Tools []string `json:"tools"`
}

// ModelInfo is one listed model.
type ModelInfo struct {
	Name string `json:"name"`
	// ContextWindow is nil when unknown.
	ContextWindow *int64 `json:"context_window"`
}

// ToolInfo is one tool.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Kind is "killable" or "immune".
	Kind string `json:"kind"`
}

// Catalog returns what sessions of this runtime can be created with.
func (rt *Runtime) Catalog() Catalog {
	c := Catalog{Models: []ModelInfo{}, Tools: []ToolInfo{}, Plugins: rt.plugins.Names(), Agents: []AgentInfo{}, DefaultAgent: rt.defaultAgent}
	for _, name := range rt.AgentNames() {
		a := rt.agents[name]
		c.Agents = append(c.Agents, AgentInfo{Name: name, Description: a.Description, Model: a.Model, Tools: append([]string{}, a.Tools...)})
	}
	if l, ok := rt.models.(llm.Lister); ok {
		for _, m := range l.List() {
			info := ModelInfo{Name: m.Name}
			if m.ContextWindow > 0 {
				info.ContextWindow = &m.ContextWindow
			}
			c.Models = append(c.Models, info)
		}
	}
	for _, s := range rt.catalog.All().Specs() {
		c.Tools = append(c.Tools, ToolInfo{Name: s.Name, Description: s.Description, Kind: s.Kind.String()})
	}
	if rt.mcp != nil {
		// One entry per MCP server, listed without starting it.
		for _, name := range rt.mcp.Servers() {
			c.Tools = append(c.Tools, ToolInfo{Name: mcp.Prefix + name, Description: "every tool of the MCP server " + name, Kind: tools.Killable.String()})
		}
		slices.SortFunc(c.Tools, func(a, b ToolInfo) int { return strings.Compare(a.Name, b.Name) })
	}
	return c
}

// CatalogOf is Catalog as far as user is granted it (WithPolicy): the
// models and tools their sessions may name (scripted models when scripts
// are granted; an MCP server's entry when its group is; the agents whose
// model and tools are granted). Without a policy
// it is Catalog.
func (rt *Runtime) CatalogOf(user string) Catalog {
	c := rt.Catalog()
	g := rt.grant(user)
	if g == nil {
		return c
	}
	c.Models = slices.DeleteFunc(c.Models, func(m ModelInfo) bool {
		if scripted(m.Name, nil) {
			return !g.Scripts()
		}
		return !g.Model(m.Name)
	})
	c.Tools = slices.DeleteFunc(c.Tools, func(t ToolInfo) bool { return !g.Tool(t.Name) })
	c.Agents = slices.DeleteFunc(c.Agents, func(a AgentInfo) bool { return !rt.MayUseAgent(user, a.Name) })
	if !slices.ContainsFunc(c.Agents, func(a AgentInfo) bool { return a.Name == c.DefaultAgent }) {
		c.DefaultAgent = ""
	}
	return c
}
