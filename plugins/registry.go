package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tack-run/tack/internal/strictjson"
)

// Config names a plugin and configures it, as create_session's
// `plugins: [{"name": ..., "config": {...}}]` does.
type Config struct {
	Name   string
	Config json.RawMessage
}

// Registry maps plugin names to factories. The runtime holds one; programs
// register the plugins they want (cmd/tack registers the built-ins).
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{factories: map[string]Factory{}} }

// Register adds a plugin under name; registering a name twice is an error.
func (r *Registry) Register(name string, f Factory) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.factories[name]; ok {
		return fmt.Errorf("plugins: %q is registered already", name)
	}
	r.factories[name] = f
	return nil
}

// Names lists the registered plugins, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.factories))
	for n := range r.factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Build makes one session's plugin instances; an unknown name or a bad
// configuration is an error naming the plugin.
func (r *Registry) Build(cfgs []Config) ([]Plugin, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var ps []Plugin
	for _, c := range cfgs {
		f, ok := r.factories[c.Name]
		if !ok {
			return nil, fmt.Errorf("unknown plugin %q (registered: %s)", c.Name, strings.Join(r.namesLocked(), ", "))
		}
		p, err := f(c.Config)
		if err != nil {
			return nil, fmt.Errorf("plugin %q: %w", c.Name, err)
		}
		if err := CheckPriority(p.Priority()); err != nil {
			return nil, fmt.Errorf("plugin %q: %w", c.Name, err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func (r *Registry) namesLocked() []string {
	names := make([]string, 0, len(r.factories))
	for n := range r.factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DecodeConfig decodes a plugin's configuration into v, which holds the
// defaults: fields absent from raw keep them, and an empty or null raw
// changes nothing. Unknown fields are errors naming where they are
// (`unknown field "max_turn" in config`), and so is data after the
// object, so that a misspelt option does not go unnoticed. Factories call it
// before validating.
func DecodeConfig(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if err := strictjson.Decode(raw, v); err != nil {
		var uf *strictjson.UnknownFieldError
		if errors.As(err, &uf) {
			return uf.Within("config")
		}
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// CheckPriority reports a priority outside 1–1000; plugin configurations
// that take a priority check it with this.
func CheckPriority(p int) error {
	if p < 1 || p > 1000 {
		return fmt.Errorf("priority %d is outside 1–1000", p)
	}
	return nil
}
