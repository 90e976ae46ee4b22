package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

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

	mu sync.Mutex
	// providers holds each provider's Provider, made at its first use and
	// shared by the models resolved since: a Provider (openai-go's client
	// within) is about 3 KiB, which every session kept before.
	providers map[string]keyed
}

// keyed is a provider's Provider and the API key it was made with: a key
// that changed in the environment makes a new one.
type keyed struct {
	key string
	p   *openai.Provider
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
// api_key_env now. The models of one provider share one llm/openai
// Provider, made anew when the key has changed.
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
	key := ""
	if env := prov.APIKeyEnv; env != "" {
		if key, _ = r.lookupEnv(env); key == "" {
			return nil, &llm.UnknownModelError{Name: name, Err: fmt.Errorf("$%s is not set: it holds the API key of provider %q", env, p)}
		}
	}
	return &llm.Model{
		Name:          p + "/" + m,
		ID:            m,
		Provider:      r.provider(p, key),
		ContextWindow: r.cfg.ContextWindow(p, m),
		Cost:          cost(prov.Models[m]),
	}, nil
}

// provider returns the Provider of provider name with API key key: the
// one made before, unless the key changed since.
func (r *Resolver) provider(name, key string) *openai.Provider {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k, ok := r.providers[name]; ok && k.key == key {
		return k.p
	}
	prov := r.cfg.Providers[name]
	opts := []openai.Option{openai.WithAPIKeyEnv(prov.APIKeyEnv)}
	if key != "" {
		opts = append(opts, openai.WithAPIKey(key))
	}
	p := openai.New(prov.BaseURL, append(opts, r.opts...)...)
	if r.providers == nil {
		r.providers = map[string]keyed{}
	}
	r.providers[name] = keyed{key: key, p: p}
	return p
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
