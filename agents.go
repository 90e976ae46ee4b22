package tack

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/placement"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/store"
)

// Agent is a named session template (docs/agents.md): what a session made
// with SessionConfig.Agent starts with, unless the configuration says
// otherwise field by field.
type Agent struct {
	// Description says what the agent is for; A2A agent cards and MCP
	// tools show it.
	Description string
	// Model is the agent's model (`script:<path>` or a configured name);
	// empty means the configured default model.
	Model string
	// System is the agent's system prompt.
	System string
	// Tools names the agent's tools.
	Tools []string
	// Plugins configures the agent's plugins.
	Plugins []plugins.Config
	// Context is the agent's context options.
	Context *llm.ContextConfig
	// Subagents configures the agent's sub-agents.
	Subagents *SubagentConfig
}

// DemoAgent is the agent `tack serve` offers when its configuration names
// none: the built-in scripted demo.
const DemoAgent = "demo"

// Demo is the built-in demo agent: the scripted model `script:demo` with
// its demo tools.
func Demo() Agent {
	return Agent{Description: "Tack's built-in demo: a scripted model that lists files, waits and answers at length, with no LLM behind it.", Model: script.Prefix + "demo"}
}

// WithAgents names session templates (SessionConfig.Agent). def names the
// default agent; "" chooses DemoAgent when it is one of agents, else the
// only agent, else none. A def that is not one of agents makes New fail.
func WithAgents(agents map[string]Agent, def string) Option {
	return func(c *Config) {
		c.Agents = agents
		c.DefaultAgent = def
	}
}

// defaultAgent picks the default of agents as WithAgents describes; a def
// that is not one of them Config.Validate refuses.
func defaultAgent(agents map[string]Agent, def string) string {
	switch {
	case def != "":
		return def
	case len(agents) == 1:
		for name := range agents {
			return name
		}
	}
	if _, ok := agents[DemoAgent]; ok {
		return DemoAgent
	}
	return ""
}

// AgentNames returns the names of the runtime's agents, sorted.
func (rt *Runtime) AgentNames() []string {
	names := make([]string, 0, len(rt.agents))
	for name := range rt.agents {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Agent returns the agent name and whether there is one.
func (rt *Runtime) Agent(name string) (Agent, bool) {
	a, ok := rt.agents[name]
	return a, ok
}

// DefaultAgent names the default agent; "" when there is none.
func (rt *Runtime) DefaultAgent() string { return rt.defaultAgent }

// withAgent is cfg with the fields it leaves empty taken from its agent;
// an unknown agent is bad_request, and one that holds what cfg.User is
// not granted is forbidden, whatever cfg overrides: a session of the
// agent is the agent's, whose system prompt and plugins an export shows.
func (rt *Runtime) withAgent(cfg SessionConfig) (SessionConfig, error) {
	if cfg.Agent == "" {
		return cfg, nil
	}
	if err := rt.permitAgent(cfg.User, cfg.Agent); err != nil {
		return cfg, err
	}
	return rt.agentDefaults(cfg)
}

// agentDefaults is cfg with the fields it leaves empty taken from its
// agent; an unknown agent is bad_request.
func (rt *Runtime) agentDefaults(cfg SessionConfig) (SessionConfig, error) {
	a, ok := rt.agents[cfg.Agent]
	if !ok {
		return cfg, &Error{Code: events.CodeBadRequest, Message: fmt.Sprintf("unknown agent %q (agents: %v)", cfg.Agent, rt.AgentNames())}
	}
	if cfg.Model == "" && len(cfg.Script) == 0 {
		cfg.Model = a.Model
	}
	if cfg.System == "" {
		cfg.System = a.System
	}
	if cfg.Tools == nil {
		cfg.Tools = slices.Clone(a.Tools)
	}
	if cfg.Plugins == nil {
		cfg.Plugins = slices.Clone(a.Plugins)
	}
	if cfg.Context == nil && a.Context != nil {
		c := *a.Context
		cfg.Context = &c
	}
	if cfg.Subagents == nil && a.Subagents != nil {
		c := *a.Subagents
		cfg.Subagents = &c
	}
	return cfg, nil
}

// MayUseAgent reports whether user may make sessions of agent under the
// runtime's policy (WithPolicy): what a server lists or describes to
// user, as CatalogOf does.
func (rt *Runtime) MayUseAgent(user, agent string) bool { return rt.permitAgent(user, agent) == nil }

// permitAgent answers forbidden when what agent holds is not granted to
// user (WithPolicy), as creating a session of it would.
func (rt *Runtime) permitAgent(user, agent string) error {
	g := rt.grant(user)
	if g == nil {
		return nil
	}
	cfg, err := rt.agentDefaults(SessionConfig{Agent: agent, User: user})
	if err != nil {
		return err
	}
	if err := rt.permit(g, cfg); err != nil {
		return err
	}
	ps, err := rt.plugins.Build(cfg.Plugins)
	if err != nil {
		return err
	}
	return permitToolsOf(g, cfg, ps)
}

// Agent returns the agent the session was made of (SessionConfig.Agent,
// kept with its configuration): "" for a session made without one, a
// sub-agent, an imported session, or one stored before the agent was
// kept. A session that does not exist is invalid_session. A session
// loaded here answers from memory; another, with a store, is read from
// its record (the agent never changes), and without one (parked) is woken
// to answer. A2A and MCP ask it at every message that names a session:
// it never copies the history.
func (s *Session) Agent(ctx context.Context) (string, error) {
	rt := s.rt
	pid, loaded := rt.registry.Lookup(s.id)
	if st := rt.env.Store; st != nil && !loaded {
		snap, err := st.Get(ctx, s.id)
		if errors.Is(err, store.ErrInvalid) { // an id no session can have
			err = placement.ErrNoSession
		}
		if err != nil {
			return "", registryError(s.id, err)
		}
		cfg, err := spec.FromStored(s.id, snap.Config)
		if err != nil {
			return "", &Error{Code: events.CodeInternal, Message: err.Error()}
		}
		return cfg.Agent, nil
	}
	// By id, not by the handle's actor: a session deleted or closed (gone,
	// without a store) is invalid_session.
	find := func() (*actor.PID, error) {
		if loaded {
			loaded = false // found again, if it parked meanwhile, by id
			return pid, nil
		}
		pid, err := rt.registry.Get(ctx, s.id)
		if err != nil {
			return nil, registryError(s.id, err)
		}
		return pid, nil
	}
	cfg, err := askFound[*spec.Session](ctx, rt, s.id, find, &actors.ConfigPoint{})
	if err != nil {
		return "", err
	}
	return cfg.Agent, nil
}
