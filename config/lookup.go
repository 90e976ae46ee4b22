package config

import (
	"errors"
	"fmt"
	"strings"
)

// errNoSuchModel is the error of Lookup for a name that means nothing to
// the configuration (not a provider's, not a listed model).
var errNoSuchModel = errors.New("no such model")

// Lookup finds the provider and model (as the provider knows it) that
// name stands for:
//
//   - "provider/model" names model at a configured provider, listed or
//     not (the split is at the first "/", so model names may hold more,
//     as in "openrouter/meta-llama/llama-3.3-70b-instruct");
//   - a bare name is the listed model of that name, when exactly one
//     provider lists it (when several do, the error lists them);
//   - a bare name nobody lists goes to the only provider, when there is
//     exactly one and it lists no models (as with OPENAI_API_KEY alone).
func (c *Config) Lookup(name string) (provider, model string, err error) {
	if name == "" {
		return "", "", fmt.Errorf("%w: no model named", errNoSuchModel)
	}
	if p, m, ok := strings.Cut(name, "/"); ok && m != "" && c.Providers[p] != nil {
		return p, m, nil
	}
	var have []string
	for _, p := range sortedKeys(c.Providers) {
		if prov := c.Providers[p]; prov != nil {
			if _, ok := prov.Models[name]; ok {
				have = append(have, p)
			}
		}
	}
	switch len(have) {
	case 1:
		return have[0], name, nil
	case 0:
		if len(c.Providers) == 1 {
			for p, prov := range c.Providers {
				if prov != nil && len(prov.Models) == 0 {
					return p, name, nil
				}
			}
		}
		return "", "", fmt.Errorf("%w: no provider has a model %q", errNoSuchModel, name)
	}
	names := make([]string, len(have))
	for i, p := range have {
		names[i] = p + "/" + name
	}
	return "", "", fmt.Errorf("model %q is ambiguous: name one of %s", name, strings.Join(names, ", "))
}

// ContextWindow returns the window of model at provider, in tokens: the
// model's own context_window, else the provider's, else the built-in
// table's (BuiltinWindow), else 0 for unknown.
func (c *Config) ContextWindow(provider, model string) int64 {
	if p := c.Providers[provider]; p != nil {
		if m := p.Models[model]; m != nil && m.ContextWindow > 0 {
			return m.ContextWindow
		}
		if p.ContextWindow > 0 {
			return p.ContextWindow
		}
	}
	return BuiltinWindow(model)
}

// ModelNames returns the "provider/model" names of every listed model, in
// order.
func (c *Config) ModelNames() []string {
	var names []string
	for _, p := range sortedKeys(c.Providers) {
		if prov := c.Providers[p]; prov != nil {
			for _, m := range sortedKeys(prov.Models) {
				names = append(names, p+"/"+m)
			}
		}
	}
	return names
}
