package limits

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tack-run/tack/plugins"
)

// Name is the plugin's name in create_session's configuration and in
// events.
const Name = "limits"

// Config configures the plugin; DefaultConfig gives the defaults. For
// every limit, 0 means none.
type Config struct {
	// MaxTurns is how many turns (model requests) one run may make
	// (default 100).
	MaxTurns int32 `json:"max_turns"`
	// MaxRunTokens and MaxRunCostUSD cap what one run may spend.
	MaxRunTokens  int64   `json:"max_run_tokens"`
	MaxRunCostUSD float64 `json:"max_run_cost_usd"`
	// MaxSessionTokens and MaxSessionCostUSD cap what the session may
	// spend over all its runs.
	MaxSessionTokens  int64   `json:"max_session_tokens"`
	MaxSessionCostUSD float64 `json:"max_session_cost_usd"`
	// Priority orders the plugin in the chain (default 50).
	Priority int `json:"priority"`
}

// DefaultConfig returns the configuration used for absent fields.
func DefaultConfig() Config { return Config{MaxTurns: 100, Priority: 50} }

// Validate reports a configuration the plugin cannot work with.
func (c Config) Validate() error {
	var errs []error
	for _, l := range []struct {
		name     string
		negative bool
	}{
		{"max_turns", c.MaxTurns < 0},
		{"max_run_tokens", c.MaxRunTokens < 0},
		{"max_run_cost_usd", c.MaxRunCostUSD < 0},
		{"max_session_tokens", c.MaxSessionTokens < 0},
		{"max_session_cost_usd", c.MaxSessionCostUSD < 0},
	} {
		if l.negative {
			errs = append(errs, fmt.Errorf("%s is negative, want 0 (no limit) or more", l.name))
		}
	}
	if err := plugins.CheckPriority(c.Priority); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
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
