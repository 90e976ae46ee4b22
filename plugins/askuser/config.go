package askuser

import (
	"encoding/json"

	"github.com/tack-run/tack/plugins"
)

// Name is the plugin's name in create_session's configuration and in
// events.
const Name = "ask_user"

// Config configures the plugin; DefaultConfig gives the defaults.
type Config struct {
	// Priority orders the plugin in the chain (default 10).
	Priority int `json:"priority"`
}

// DefaultConfig returns the configuration used for absent fields.
func DefaultConfig() Config { return Config{Priority: 10} }

// Validate reports a configuration the plugin cannot work with.
func (c Config) Validate() error {
	if err := plugins.CheckPriority(c.Priority); err != nil {
		return err
	}
	return nil
}

// New is the plugin's Factory: it parses raw (unknown fields are errors;
// absent ones take DefaultConfig's values) and returns a plugin instance.
func New(raw json.RawMessage) (plugins.Plugin, error) {
	c := DefaultConfig()
	if err := plugins.DecodeConfig(raw, &c); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &plugin{cfg: c}, nil
}
