package spec

import (
	"encoding/json"
	"fmt"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/store"
)

// Stored is what the store keeps of the session s describes, whose model
// resolved to the name model.
func (s *Session) Stored(model string) store.Config {
	sc := store.Config{Model: model, System: s.System, Tools: s.Tools, Script: s.Script, User: s.User, QueueMode: string(s.QueueMode)}
	if len(s.Plugins) > 0 {
		sc.Plugins, _ = json.Marshal(pluginsJSON(s.Plugins)) // names and raw JSON: cannot fail
	}
	if s.Context != nil {
		sc.Context, _ = json.Marshal(s.Context) // numbers and a string: cannot fail
	}
	if s.Subagents != nil {
		sc.Subagents, _ = json.Marshal(s.Subagents) // numbers, strings and bools: cannot fail
	}
	return sc
}

// FromStored is the Session of session id's stored configuration; Stored
// is its inverse. It fails only on JSON the store holds that no runtime
// wrote.
func FromStored(id string, c store.Config) (Session, error) {
	s := Session{ID: id, Model: c.Model, Script: c.Script, System: c.System,
		Tools: c.Tools, Plugins: configsFrom(c.Plugins), User: c.User, QueueMode: events.QueueMode(c.QueueMode)}
	if len(c.Context) > 0 {
		s.Context = &llm.ContextConfig{}
		if err := json.Unmarshal(c.Context, s.Context); err != nil {
			return Session{}, fmt.Errorf("stored context options of %s: %v", id, err)
		}
	}
	if len(c.Subagents) > 0 {
		s.Subagents = &Subagents{}
		if err := json.Unmarshal(c.Subagents, s.Subagents); err != nil {
			return Session{}, fmt.Errorf("stored sub-agent options of %s: %v", id, err)
		}
	}
	return s, nil
}

// settings is a session's configuration besides its model and user, as
// one JSON object: what the store keeps (store.Config.Spec) and what an
// export's config holds besides the model. A field at its zero value is
// left out and reads back as unset.
type settings struct {
	Script    json.RawMessage    `json:"script,omitempty"`
	System    string             `json:"system,omitempty"`
	Tools     []string           `json:"tools,omitempty"`
	Plugins   []pluginConfig     `json:"plugins,omitempty"`
	Context   *llm.ContextConfig `json:"context,omitempty"`
	Subagents *Subagents         `json:"subagents,omitempty"`
	QueueMode events.QueueMode   `json:"queue_mode,omitempty"`
}

// settings is the settings of s.
func (s *Session) settings() settings {
	return settings{Script: s.Script, System: s.System, Tools: s.Tools, Plugins: pluginsJSON(s.Plugins),
		Context: s.Context, Subagents: s.Subagents, QueueMode: s.QueueMode}
}

// pluginConfig is the stored form of a plugin's configuration.
type pluginConfig struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config,omitempty"`
}

func pluginsJSON(cs []plugins.Config) []pluginConfig {
	out := make([]pluginConfig, len(cs))
	for i, c := range cs {
		out[i] = pluginConfig{Name: c.Name, Config: c.Config}
	}
	return out
}

// configsFrom is the plugin configurations stored as raw; nil for none.
func configsFrom(raw json.RawMessage) []plugins.Config {
	if len(raw) == 0 {
		return nil
	}
	var pcs []pluginConfig
	_ = json.Unmarshal(raw, &pcs) // the runtime wrote it
	out := make([]plugins.Config, len(pcs))
	for i, c := range pcs {
		out[i] = plugins.Config{Name: c.Name, Config: c.Config}
	}
	return out
}
