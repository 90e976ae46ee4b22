package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// UnknownModelError is the error of a Resolver for a name it cannot turn
// into a model. It matches ErrUnknownModel with errors.Is.
type UnknownModelError struct {
	// Name is the model name asked for.
	Name string
	// Err says why when the resolver recognised the name but could not load
	// the model (a missing or invalid script file); nil when the name meant
	// nothing to it.
	Err error
}

// Error names the model and, when known, the reason.
func (e *UnknownModelError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("unknown model %q", e.Name)
	}
	return fmt.Sprintf("unknown model %q: %v", e.Name, e.Err)
}

// Is reports whether target is ErrUnknownModel.
func (e *UnknownModelError) Is(target error) bool { return target == ErrUnknownModel }

// Unwrap returns the reason.
func (e *UnknownModelError) Unwrap() error { return e.Err }

// Chain returns a Resolver that asks each of resolvers in order. The first
// answer that is not an unknown-model error wins, success or failure.
// When every resolver says unknown, the error is the first
// *UnknownModelError that carries a reason (so "script:missing.json" says
// the file is missing), else a plain *UnknownModelError naming the model.
// The chain is also a Lister of what its resolvers list.
func Chain(resolvers ...Resolver) Resolver {
	return chain(slices.Clone(resolvers))
}

// chain is the Resolver of Chain.
type chain []Resolver

// Resolve asks each resolver in turn.
func (c chain) Resolve(name string, inline json.RawMessage) (*Model, error) {
	var reason *UnknownModelError
	for _, r := range c {
		m, err := r.Resolve(name, inline)
		if err == nil || !errors.Is(err, ErrUnknownModel) {
			return m, err
		}
		var u *UnknownModelError
		if reason == nil && errors.As(err, &u) && u.Err != nil {
			reason = u
		}
	}
	if reason != nil {
		return nil, reason
	}
	return nil, &UnknownModelError{Name: name}
}

// Listing is a model a Lister offers by name, for model choosers.
type Listing struct {
	// Name is what a session names the model by.
	Name string
	// ContextWindow is 0 when unknown.
	ContextWindow int64
}

// Lister is a Resolver that can say in advance which names it resolves —
// not every one (a script path is any file), but those a person would pick
// from a list. The first listing is the resolver's default.
type Lister interface {
	List() []Listing
}

// List returns the listings of the chain's Listers, in order, each name
// once.
func (c chain) List() []Listing {
	var out []Listing
	seen := map[string]bool{}
	for _, r := range c {
		l, ok := r.(Lister)
		if !ok {
			continue
		}
		for _, m := range l.List() {
			if !seen[m.Name] {
				seen[m.Name] = true
				out = append(out, m)
			}
		}
	}
	return out
}
