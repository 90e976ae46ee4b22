package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tack-run/tack/plugins"
)

// Name is the plugin's name in create_session's configuration and in
// events.
const Name = "approval"

// shellTool is the tool whose calls are judged by command.
const shellTool = "shell"

// Config configures the plugin; DefaultConfig gives the defaults.
type Config struct {
	// Tools are the tools whose calls need approval (default ["shell"]).
	Tools []string `json:"tools"`
	// SafeCommands are shell command prefixes that never need approval,
	// matched on whole words of a plain command: "ls" matches "ls -la",
	// not "lsof"; "wc -l" matches "wc -l a.txt", not "wc -c a.txt". The
	// first word is a command's name, not a path or an assignment. A safe
	// command runs with any further arguments, in the model's workspace:
	// name only commands that nothing there (configuration, hooks,
	// scripts, build files) or in their arguments can make run other
	// code — never git, make, npm, go, find, sed, env or the like.
	SafeCommands []string `json:"safe_commands"`
	// TimeoutMS is how long an approval waits before it times out as
	// rejected (default 120000); a timeout over a century waits a century.
	TimeoutMS int64 `json:"timeout_ms"`
	// AutoResume continues the run after a rejection (default false: the
	// session stays idle).
	AutoResume bool `json:"auto_resume"`
	// Priority orders the plugin in the chain (default 100).
	Priority int `json:"priority"`
}

// DefaultConfig returns the configuration used for absent fields.
func DefaultConfig() Config {
	return Config{Tools: []string{shellTool}, TimeoutMS: 120000, Priority: 100}
}

// Validate reports a configuration the plugin cannot work with.
func (c Config) Validate() error {
	var errs []error
	for _, t := range c.Tools {
		if strings.TrimSpace(t) == "" {
			errs = append(errs, errors.New("tools: a tool name is empty"))
		}
	}
	for _, s := range c.SafeCommands {
		words, plain := split(s)
		switch {
		case !plain:
			errs = append(errs, fmt.Errorf("safe_commands: %q has a shell operator, a quote, a backslash, "+
				"a control character or a non-ASCII character", s))
		case len(words) == 0:
			errs = append(errs, errors.New("safe_commands: a command is empty"))
		case isAssignment(words[0]):
			errs = append(errs, fmt.Errorf("safe_commands: %q starts with a variable assignment", s))
		case strings.Contains(words[0], "/"):
			errs = append(errs, fmt.Errorf("safe_commands: %q is a path, not a command's name", words[0]))
		case strings.ContainsAny(s, nameSpecial):
			errs = append(errs, fmt.Errorf("safe_commands: %q has one of %s", s, nameSpecial))
		}
	}
	if c.TimeoutMS < 1 {
		errs = append(errs, fmt.Errorf("timeout_ms is %d, want at least 1", c.TimeoutMS))
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
	p := &plugin{cfg: c, tools: map[string]bool{}, timeout: timeoutOf(c.TimeoutMS)}
	for _, t := range c.Tools {
		p.tools[t] = true
	}
	for _, s := range c.SafeCommands {
		words, _ := split(s)
		p.safe = append(p.safe, words)
	}
	return p, nil
}

// maxTimeout is the longest an approval waits: a longer timeout_ms is
// taken as this, a century, which is never in practice. It is not the
// longest time.Duration (about 292 years): a held call's deadline is
// stored in nanoseconds since 1970, which an int64 holds up to 2262.
const maxTimeout = 100 * 365 * 24 * time.Hour

// timeoutOf is timeout_ms as a time.Duration, at most maxTimeout, so that
// a timeout past what a Duration holds does not wrap around to one that
// is over at once.
func timeoutOf(ms int64) time.Duration {
	if ms > int64(maxTimeout/time.Millisecond) {
		return maxTimeout
	}
	return time.Duration(ms) * time.Millisecond
}
