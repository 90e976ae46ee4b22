package spec

import (
	"bytes"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
)

// Share returns a Session equal to s but for its ID, which is empty: the
// same one for every caller whose Session differs from s at most by ID,
// while any of them holds it. A nil s is the zero Session. What Share
// returns is read-only: change a copy, and share that.
//
// A live session keeps its configuration, as the store keeps it, for as
// long as it lives; sessions made from one template (one agent, one
// create_session body sent many times) then hold one copy of it and of
// its system prompt, whatever made their strings, not one each
// (docs/benchmarks.md, issue 30's finding 28).
func Share(s *Session) *Session {
	if s == nil {
		s = &Session{}
	}
	k := shareKey{model: s.Model, system: s.System, user: s.User, agent: s.Agent}
	shared.Lock()
	defer shared.Unlock()
	if p := shared.m[k].Value(); p != nil && (p == s || p.same(s)) {
		return p
	}
	c := *s
	c.ID = ""
	p := &c
	if shared.m == nil {
		shared.m = map[shareKey]weak.Pointer[Session]{}
	}
	shared.m[k] = weak.Make(p)
	runtime.AddCleanup(p, forget, k)
	return p
}

// shared holds the Sessions Share gave, by the fields most likely to tell
// them apart; a key holds the last Session given for it.
var shared struct {
	sync.Mutex
	m map[shareKey]weak.Pointer[Session]
}

type shareKey struct{ model, system, user, agent string }

// forget drops k's entry once its Session is gone, unless another took
// its place.
func forget(k shareKey) {
	shared.Lock()
	defer shared.Unlock()
	if shared.m[k].Value() == nil {
		delete(shared.m, k)
	}
}

// same reports whether s and o are equal but for their IDs.
func (s *Session) same(o *Session) bool {
	return s.Model == o.Model && bytes.Equal(s.Script, o.Script) && s.System == o.System &&
		slices.Equal(s.Tools, o.Tools) && slices.EqualFunc(s.Plugins, o.Plugins, samePlugin) &&
		s.User == o.User && sameContext(s.Context, o.Context) && s.Subagents.same(o.Subagents) &&
		s.QueueMode == o.QueueMode && s.Agent == o.Agent
}

func samePlugin(a, b plugins.Config) bool {
	return a.Name == b.Name && bytes.Equal(a.Config, b.Config)
}

func sameContext(a, b *llm.ContextConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.KeepRecent, y.KeepRecent = nil, nil
	return x == y && samePointed(a.KeepRecent, b.KeepRecent)
}

func (c *Subagents) same(o *Subagents) bool {
	if c == nil || o == nil {
		return c == o
	}
	return samePointed(c.MaxDepth, o.MaxDepth) && c.Model == o.Model && slices.Equal(c.Tools, o.Tools) &&
		samePointed(c.InheritPlugins, o.InheritPlugins) && c.Depth == o.Depth
}

// samePointed reports whether a and b are both nil or point to equal
// values.
func samePointed[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
