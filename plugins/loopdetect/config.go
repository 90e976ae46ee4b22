package loopdetect

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tack-run/tack/plugins"
)

// Name is the plugin's name in create_session's configuration and in
// events.
const Name = "loop_detection"

// Config configures the plugin; DefaultConfig gives the defaults.
type Config struct {
	// Threshold is the count at which a loop is reported to the model
	// (default 3, at least 2).
	Threshold int `json:"threshold"`
	// AbortAt is the count at which the run is aborted (default 6; 0
	// never aborts; otherwise at least Threshold).
	AbortAt int `json:"abort_at"`
	// Priority orders the plugin in the chain (default 200).
	Priority int `json:"priority"`
}

// DefaultConfig returns the configuration used for absent fields.
func DefaultConfig() Config { return Config{Threshold: 3, AbortAt: 6, Priority: 200} }

// Validate reports a configuration the plugin cannot work with.
func (c Config) Validate() error {
	var errs []error
	if c.Threshold < 2 {
		errs = append(errs, fmt.Errorf("threshold is %d, want at least 2", c.Threshold))
	}
	if c.AbortAt != 0 && c.AbortAt < c.Threshold {
		errs = append(errs, fmt.Errorf("abort_at is %d, want 0 (never) or at least threshold (%d)", c.AbortAt, c.Threshold))
	}
	if err := plugins.CheckPriority(c.Priority); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// New is the plugin's Factory: it parses raw (unknown fields are errors;
// absent ones take DefaultConfig's values) and returns a plugin instance
// for one session.
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
