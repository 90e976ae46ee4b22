package offload

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/tack-run/tack/plugins"
)

// Name is the plugin's name in create_session's configuration and in
// events.
const Name = "large_result_offload"

// CharsPerToken is the estimate that turns ThresholdTokens into characters.
const CharsPerToken = 4

// maxThresholdTokens is the largest threshold_tokens: its characters,
// CharsPerToken a token, are an int.
const maxThresholdTokens = math.MaxInt / CharsPerToken

// Config configures the plugin; DefaultConfig gives the defaults.
type Config struct {
	// ThresholdTokens is the size, in tokens of CharsPerToken characters,
	// above which a result is offloaded (default 20000).
	ThresholdTokens int `json:"threshold_tokens"`
	// HeadChars and TailChars are how many characters of the start and
	// the end of the result the preview keeps (default 2000 each).
	HeadChars int `json:"head_chars"`
	TailChars int `json:"tail_chars"`
	// Priority orders the plugin in the chain (default 300).
	Priority int `json:"priority"`
}

// DefaultConfig returns the configuration used for absent fields.
func DefaultConfig() Config {
	return Config{
		ThresholdTokens: 20000,
		HeadChars:       2000,
		TailChars:       2000,
		Priority:        300,
	}
}

// Validate reports a configuration the plugin cannot work with.
func (c Config) Validate() error {
	var errs []error
	threshold := c.ThresholdTokens >= 1 && c.ThresholdTokens <= maxThresholdTokens
	switch {
	case c.ThresholdTokens < 1:
		errs = append(errs, fmt.Errorf("threshold_tokens is %d, want at least 1", c.ThresholdTokens))
	case !threshold:
		errs = append(errs, fmt.Errorf("threshold_tokens is %d, want at most %d", c.ThresholdTokens, maxThresholdTokens))
	}
	// Sums and products that could pass an int's largest are not made:
	// they would wrap around to a small or negative number that passes.
	if c.HeadChars < 0 || c.TailChars < 0 {
		errs = append(errs, fmt.Errorf("head_chars and tail_chars are %d and %d, want at least 0", c.HeadChars, c.TailChars))
	} else if limit := c.ThresholdTokens * CharsPerToken; threshold && (c.HeadChars >= limit || c.TailChars >= limit-c.HeadChars) {
		errs = append(errs, fmt.Errorf("head_chars + tail_chars is %d, want less than the threshold's %d characters",
			uint64(c.HeadChars)+uint64(c.TailChars), limit))
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
