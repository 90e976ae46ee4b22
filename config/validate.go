package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/tack-run/tack/tools/mcp"
)

// envName is the shape of an environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate reports every problem of c, each naming where it is:
//
//   - at least one provider or MCP server; provider names non-empty and
//     without "/";
//   - base_url an absolute http or https URL;
//   - api_key_env a variable name (not the key itself);
//   - context windows and costs not negative; model names non-empty;
//   - default_model, when set, naming exactly one model;
//   - each of mcp_servers with a command or a url (mcp.ServerConfig.Validate);
//   - agent names of AgentNameRule, each agent an object, plugins named;
//     default_agent, when set, one of them;
//   - each of a2a_agents with an http(s) url (a2a.Agent.Validate).
func (c *Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(c.Providers) == 0 && len(c.MCPServers) == 0 && len(c.Agents) == 0 && len(c.A2AAgents) == 0 {
		add("providers: none defined (a file with only mcp_servers or agents takes its models from the environment, as with no file)")
	}
	c.validateAgents(add)
	for _, name := range sortedKeys(c.A2AAgents) {
		if err := c.A2AAgents[name].Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range sortedKeys(c.Providers) {
		p := c.Providers[name]
		at := "providers." + name
		switch {
		case name == "":
			add("providers: a provider has an empty name")
		case strings.Contains(name, "/"):
			add("%s: a provider name cannot contain \"/\" (models are named provider/model)", at)
		}
		if p == nil {
			add("%s: null instead of an object", at)
			continue
		}
		if err := checkURL(p.BaseURL); err != nil {
			add("%s.base_url: %v", at, err)
		}
		if p.APIKeyEnv != "" && !envName.MatchString(p.APIKeyEnv) {
			add("%s.api_key_env: %q is not an environment variable name (give the name of the variable that holds the key, not the key)", at, p.APIKeyEnv)
		}
		if p.ContextWindow < 0 {
			add("%s.context_window: %d is negative", at, p.ContextWindow)
		}
		for _, m := range sortedKeys(p.Models) {
			checkModel(at+".models."+m, m, p.Models[m], add)
		}
	}
	if err := mcp.ValidateAll(c.MCPServers); err != nil {
		errs = append(errs, err)
	}
	if c.DefaultModel != "" && len(errs) == 0 {
		if _, _, err := c.Lookup(c.DefaultModel); err != nil {
			add("default_model: %v", err)
		}
	}
	return errors.Join(errs...)
}

// checkModel validates one model's settings.
func checkModel(at, name string, m *Model, add func(string, ...any)) {
	if strings.TrimSpace(name) == "" {
		add("%s: a model has an empty name", at)
	}
	if m == nil {
		return
	}
	if m.ContextWindow < 0 {
		add("%s.context_window: %d is negative", at, m.ContextWindow)
	}
	if c := m.Cost; c != nil {
		if c.Input < 0 || c.Output < 0 || (c.CachedInput != nil && *c.CachedInput < 0) {
			add("%s.cost: prices cannot be negative", at)
		}
	}
}

// checkURL tells what is wrong with a base URL.
func checkURL(raw string) error {
	if raw == "" {
		return errors.New("missing")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL", raw)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http or https URL (such as http://127.0.0.1:8000/v1)", raw)
	}
	return nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// AgentNameRule is what an agent's name is made of: it is a path segment
// of /a2a/{agent} and part of the MCP tool name ask_<agent>.
const AgentNameRule = "1-64 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit"

// agentName is AgentNameRule.
var agentName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// validateAgents checks the agents and default_agent.
func (c *Config) validateAgents(add func(string, ...any)) {
	for _, name := range sortedKeys(c.Agents) {
		at := "agents." + name
		if !agentName.MatchString(name) {
			add("agents: %q is not an agent name: a name is %s", name, AgentNameRule)
		}
		a := c.Agents[name]
		if a == nil {
			add("%s: null instead of an object", at)
			continue
		}
		for i, p := range a.Plugins {
			if p.Name == "" {
				add("%s.plugins[%d]: a plugin needs a name", at, i)
			}
		}
	}
	if c.DefaultAgent != "" {
		if _, ok := c.Agents[c.DefaultAgent]; !ok {
			add("default_agent: %q is not one of agents", c.DefaultAgent)
		}
	}
}
