package spec

import (
	"encoding/json"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
)

// FromCreate is the Session create_session's message m asks for, for
// user; Create is its inverse.
func FromCreate(m *eventsv1.CreateSession, user string) Session {
	var ps []plugins.Config
	for _, p := range m.Plugins {
		ps = append(ps, plugins.Config{Name: p.Name, Config: json.RawMessage(p.GetConfig().GetJson())})
	}
	return Session{
		ID: m.Session, Model: m.Model, Script: json.RawMessage(m.GetScript().GetJson()),
		System: m.System, Tools: m.Tools, Plugins: ps, User: user, Context: contextConfig(m.Context),
		Subagents: subagentConfig(m.Subagents), QueueMode: events.QueueMode(m.QueueMode), Agent: m.Agent,
	}
}

// Create is the create_session message that makes the session cfg
// describes (all but cfg.User, which the message does not carry): what a
// runtime whose sessions live in other processes sends them.
func (cfg *Session) Create() *eventsv1.CreateSession {
	m := &eventsv1.CreateSession{Session: cfg.ID, Model: cfg.Model, System: cfg.System, Tools: cfg.Tools, QueueMode: string(cfg.QueueMode), Agent: cfg.Agent}
	if len(cfg.Script) > 0 {
		m.Script = &eventsv1.RawJSON{Json: cfg.Script}
	}
	for _, p := range cfg.Plugins {
		pc := &eventsv1.PluginConfig{Name: p.Name}
		if len(p.Config) > 0 {
			pc.Config = &eventsv1.RawJSON{Json: p.Config}
		}
		m.Plugins = append(m.Plugins, pc)
	}
	if c := cfg.Context; c != nil {
		m.Context = &eventsv1.ContextOptions{CompactModel: c.CompactModel}
		if c.MaxMessages != 0 {
			m.Context.MaxMessages = new(int32(c.MaxMessages))
		}
		if c.MaxTokens != 0 {
			m.Context.MaxTokens = new(c.MaxTokens)
		}
		if c.MaxPercent != 0 {
			m.Context.MaxPercent = new(c.MaxPercent)
		}
		if c.CompactAtPercent != 0 {
			m.Context.CompactAtPercent = new(c.CompactAtPercent)
		}
		if c.KeepRecent != nil {
			m.Context.KeepRecent = new(int32(*c.KeepRecent))
		}
	}
	if c := cfg.Subagents; c != nil {
		m.Subagents = &eventsv1.SubagentOptions{Model: c.Model, Tools: c.Tools, InheritPlugins: c.InheritPlugins}
		if c.MaxDepth != nil {
			m.Subagents.MaxDepth = new(int32(*c.MaxDepth))
		}
	}
	return m
}

// contextConfig is create_session's context option as the runtime takes
// it; nil when absent. The runtime checks the values.
func contextConfig(o *eventsv1.ContextOptions) *llm.ContextConfig {
	if o == nil {
		return nil
	}
	c := &llm.ContextConfig{
		MaxMessages: int(o.GetMaxMessages()), MaxTokens: o.GetMaxTokens(), MaxPercent: o.GetMaxPercent(),
		CompactAtPercent: o.GetCompactAtPercent(), CompactModel: o.GetCompactModel(),
	}
	if o.KeepRecent != nil {
		c.KeepRecent = new(int(o.GetKeepRecent()))
	}
	return c
}

// subagentConfig is create_session's subagents option as the runtime
// takes it; nil when absent. The runtime checks the values.
func subagentConfig(o *eventsv1.SubagentOptions) *Subagents {
	if o == nil {
		return nil
	}
	c := &Subagents{Model: o.GetModel(), Tools: o.GetTools(), InheritPlugins: o.InheritPlugins}
	if o.MaxDepth != nil {
		c.MaxDepth = new(int(o.GetMaxDepth()))
	}
	return c
}
