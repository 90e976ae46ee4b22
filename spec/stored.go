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
// resolved to the name model: the model and the user as the store's own
// fields, everything else as one JSON object (store.Config.Spec) that
// FromStored reads back. A session Validate refuses (raw JSON that is
// not JSON) gives settings that are not JSON either, which the store
// refuses as store.ErrInvalid.
func (s *Session) Stored(model string) store.Config {
	c := store.Config{Model: model, User: s.User}
	switch b, err := json.Marshal(storedSettings{settings: s.settings(), Agent: s.Agent}); {
	case err != nil:
		c.Spec = notJSON
	case string(b) != "{}":
		c.Spec = b
	}
	return c
}

// notJSON is the settings of a session whose raw JSON is not JSON.
var notJSON = json.RawMessage("raw JSON that is not JSON")

// FromStored is the Session of session id's stored configuration; Stored
// is its inverse. A setting absent from the stored object, or null, is
// unset: rows the store migrated from its older columns hold nulls, "" and
// [] for settings they did not have. It fails only on JSON the store holds
// that no runtime wrote.
func FromStored(id string, c store.Config) (Session, error) {
	s := Session{ID: id, Model: c.Model, User: c.User}
	if len(c.Spec) == 0 {
		return s, nil
	}
	var o storedSettings
	if err := json.Unmarshal(c.Spec, &o); err != nil {
		return Session{}, fmt.Errorf("stored settings of %s: %v", id, err)
	}
	s.System, s.Context, s.Subagents, s.QueueMode, s.Agent = o.System, o.Context, o.Subagents, o.QueueMode, o.Agent
	if len(o.Tools) > 0 {
		s.Tools = o.Tools
	}
	if len(o.Script) > 0 && string(o.Script) != "null" {
		s.Script = o.Script
	}
	for _, p := range o.Plugins {
		s.Plugins = append(s.Plugins, plugins.Config{Name: p.Name, Config: p.Config})
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

// storedSettings is what the store keeps besides the model and the user:
// the settings, and the agent the session was made of (which an export's
// config leaves out: an import makes a session of no agent). A record
// written before the agent was kept reads as a session of no agent.
type storedSettings struct {
	settings
	Agent string `json:"agent,omitempty"`
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
