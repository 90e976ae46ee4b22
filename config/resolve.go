package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/openai"
)

// Resolver is the llm.Resolver of configured models: it turns a model name
// into an llm.Model streamed by an llm/openai Provider for the model's
// server.
type Resolver struct {
	cfg  *Config
	opts []openai.Option
	// lookupEnv reads the API keys; tests replace it.
	lookupEnv func(string) (string, bool)
}

// NewResolver returns a Resolver for cfg, whose Providers get opts (an
// HTTP client to share, retry and stall settings) after the base URL and
// key. cfg must not change while the Resolver is in use.
func NewResolver(cfg *Config, opts ...openai.Option) *Resolver {
	return &Resolver{cfg: cfg, opts: opts, lookupEnv: os.LookupEnv}
}

// Resolve returns the model name stands for (see Config.Lookup), or the
// default model when name is "". The model's Name is "provider/model", its
// ID the model's own name, its window from Config.ContextWindow, its cost
// from the configuration. The API key is read from the provider's
// api_key_env now.
//
// Inline scripts, and names that mean nothing to the configuration, yield
// a plain *llm.UnknownModelError, so that llm.Chain asks the next
// resolver; an ambiguous name, or a key variable that is not set, yields
// one that says why.
func (r *Resolver) Resolve(name string, inline json.RawMessage) (*llm.Model, error) {
	if raw := bytes.TrimSpace(inline); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		return nil, &llm.UnknownModelError{Name: name}
	}
	if name == "" {
		name = r.cfg.DefaultModel
	}
	p, m, err := r.cfg.Lookup(name)
	if errors.Is(err, errNoSuchModel) {
		return nil, &llm.UnknownModelError{Name: name}
	}
	if err != nil {
		return nil, &llm.UnknownModelError{Name: name, Err: err}
	}
	prov := r.cfg.Providers[p]
	opts := []openai.Option{openai.WithAPIKeyEnv(prov.APIKeyEnv)}
	if env := prov.APIKeyEnv; env != "" {
		key, _ := r.lookupEnv(env)
		if key == "" {
			return nil, &llm.UnknownModelError{Name: name, Err: fmt.Errorf("$%s is not set: it holds the API key of provider %q", env, p)}
		}
		opts = append(opts, openai.WithAPIKey(key))
	}
	return &llm.Model{
		Name:          p + "/" + m,
		ID:            m,
		Provider:      openai.New(prov.BaseURL, append(opts, r.opts...)...),
		ContextWindow: r.cfg.ContextWindow(p, m),
		Cost:          cost(prov.Models[m]),
	}, nil
}

// cost returns the configured price of m, zero when none.
func cost(m *Model) llm.Cost {
	if m == nil || m.Cost == nil {
		return llm.Cost{}
	}
	c := llm.Cost{Input: m.Cost.Input, Output: m.Cost.Output, CachedInput: m.Cost.Input}
	if m.Cost.CachedInput != nil {
		c.CachedInput = *m.Cost.CachedInput
	}
	return c
}

// List lists every configured model with its context window, the default
// model first.
func (r *Resolver) List() []llm.Listing {
	first := ""
	if p, m, err := r.cfg.Lookup(r.cfg.DefaultModel); r.cfg.DefaultModel != "" && err == nil {
		first = p + "/" + m
	}
	var out []llm.Listing
	for _, name := range r.cfg.ModelNames() {
		p, m, _ := strings.Cut(name, "/")
		l := llm.Listing{Name: name, ContextWindow: r.cfg.ContextWindow(p, m)}
		if name == first {
			out = append([]llm.Listing{l}, out...)
		} else {
			out = append(out, l)
		}
	}
	return out
}
