package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Everyone is the key of the entry every user gets unless their own
// entry says otherwise.
const Everyone = "*"

// Policy is what a runtime's users may use and how much.
type Policy struct {
	// Grants are the grants by user, with Everyone's as the default.
	Grants Grants
	// Limits are the limits by user, with Everyone's as the default.
	Limits Limits
}

// Grant returns what user may use; nil (everything) for a nil Policy.
func (p *Policy) Grant(user string) *Grant {
	if p == nil {
		return nil
	}
	return p.Grants.For(user)
}

// Limit returns user's limits; none for a nil Policy.
func (p *Policy) Limit(user string) Limit {
	if p == nil {
		return Limit{}
	}
	return p.Limits.For(user)
}

// Validate reports an entry no user could have: an empty name or
// pattern, a negative limit.
func (p *Policy) Validate() error {
	if p == nil {
		return nil
	}
	for _, user := range slices.Sorted(maps.Keys(p.Grants)) {
		if err := p.Grants[user].validate(); err != nil {
			return fmt.Errorf("grants[%q]: %w", user, err)
		}
	}
	for _, user := range slices.Sorted(maps.Keys(p.Limits)) {
		if err := p.Limits[user].validate(); err != nil {
			return fmt.Errorf("limits[%q]: %w", user, err)
		}
	}
	return nil
}

// Rules is one entry of the grants: a nil field is not set, and takes
// the "*" entry's value, else the default.
type Rules struct {
	// Models are the configured models granted, by name ("provider/model")
	// or pattern ("openai/*"); scripted models are Scripts'.
	Models []string `json:"models,omitempty"`
	// Tools are the tools granted, by name or pattern ("search/*",
	// "mcp:search").
	Tools []string `json:"tools,omitempty"`
	// Scripts allows scripted models: script:<path> and inline scripts.
	Scripts *bool `json:"scripts,omitempty"`
}

func (r Rules) validate() error {
	for _, list := range [][]string{r.Models, r.Tools} {
		if slices.Contains(list, "") {
			return fmt.Errorf("an empty name or pattern")
		}
	}
	return nil
}

// Grants maps a user (or Everyone) to their entry.
type Grants map[string]Rules

// For returns user's grant: their entry over Everyone's, key by key, over
// the default.
func (g Grants) For(user string) *Grant {
	own, all := g[user], g[Everyone]
	out := &Grant{scripts: true}
	if r := pick(own.Models, all.Models); r != nil {
		out.models = r
	}
	if r := pick(own.Tools, all.Tools); r != nil {
		out.tools = r
	}
	switch {
	case own.Scripts != nil:
		out.scripts = *own.Scripts
	case all.Scripts != nil:
		out.scripts = *all.Scripts
	}
	return out
}

// pick is own when set, else all (nil when neither is).
func pick(own, all []string) []string {
	if own != nil {
		return own
	}
	return all
}

// Grant is what one user may use. Its methods on a nil *Grant allow
// everything.
type Grant struct {
	// models and tools are nil for the default.
	models, tools []string
	scripts       bool
}

// Model reports whether the configured model called name may be used.
// Scripted models are Scripts'.
func (g *Grant) Model(name string) bool {
	if g == nil || g.models == nil {
		return true
	}
	return matchAny(g.models, name)
}

// Scripts reports whether scripted models (script:<path>, inline
// scripts) may be used.
func (g *Grant) Scripts() bool { return g == nil || g.scripts }

// Tool reports whether the tool called name may be used; name may be an
// MCP server's group, "mcp:<server>".
func (g *Grant) Tool(name string) bool {
	if g == nil {
		return true
	}
	if g.tools == nil {
		return name != "shell" && !mcpName(name)
	}
	if matchAny(g.tools, name) {
		return true
	}
	// A group stands for every tool of its server: a pattern that
	// matches "<server>/*" read as a name covers them all, and a grant of
	// the group covers each of them, "<server>/<tool>".
	if server, ok := strings.CutPrefix(name, mcpPrefix); ok {
		return matchAny(g.tools, server+"/*")
	}
	if server, _, ok := strings.Cut(name, "/"); ok {
		return matchAny(g.tools, mcpPrefix+server)
	}
	return false
}

// mcpPrefix starts an MCP server's group name (as tools/mcp.Prefix).
const mcpPrefix = "mcp:"

// mcpName reports whether name is an MCP tool's or group's (as
// tools/mcp.IsMCPName, which this package does not import).
func mcpName(name string) bool {
	return strings.HasPrefix(name, mcpPrefix) || strings.Contains(name, "/")
}

// matchAny reports whether a pattern of patterns matches name.
func matchAny(patterns []string, name string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return Match(p, name) })
}

// Match reports whether pattern matches the whole of name: '*' matches
// any run of characters ('/' included), every other character itself.
func Match(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	rest, ok := strings.CutPrefix(name, parts[0])
	if !ok {
		return false
	}
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return len(rest) >= len(last) && strings.HasSuffix(rest, last)
}

// Limit bounds what one user does; 0 is no bound.
type Limit struct {
	// MaxSessions bounds the user's sessions open at once (made and not
	// closed, sub-agents aside).
	MaxSessions int `json:"max_sessions,omitempty"`
	// MaxRunning bounds the user's runs in progress at once (sub-agents'
	// aside).
	MaxRunning int `json:"max_running,omitempty"`
	// RequestsPerMinute bounds the user's requests in any minute, refused
	// ones included.
	RequestsPerMinute int `json:"requests_per_minute,omitempty"`
	// MaxOpenRequests bounds the user's requests open at once: event
	// streams, WebSockets and the rest while they are answered. The rate
	// bounds how fast a user opens streams, not how many stay open.
	MaxOpenRequests int `json:"max_open_requests,omitempty"`
}

func (l Limit) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"max_sessions", l.MaxSessions}, {"max_running", l.MaxRunning}, {"requests_per_minute", l.RequestsPerMinute},
		{"max_open_requests", l.MaxOpenRequests}} {
		if f.v < 0 {
			return fmt.Errorf("%s must not be negative, not %d", f.name, f.v)
		}
	}
	return nil
}

// Limits maps a user (or Everyone) to their limits.
type Limits map[string]Limit

// For returns user's limits: each of their own that is set (not 0), else
// Everyone's.
func (l Limits) For(user string) Limit {
	own, all := l[user], l[Everyone]
	return Limit{
		MaxSessions:       cmp(own.MaxSessions, all.MaxSessions),
		MaxRunning:        cmp(own.MaxRunning, all.MaxRunning),
		RequestsPerMinute: cmp(own.RequestsPerMinute, all.RequestsPerMinute),
		MaxOpenRequests:   cmp(own.MaxOpenRequests, all.MaxOpenRequests),
	}
}

// cmp is a when set, else b.
func cmp(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}
