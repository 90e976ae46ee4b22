// Package spec is what a session is made from, as its creator asks for
// it: the one description of a session's settings that every way in
// shares. The Go API takes it (tack.SessionConfig is spec.Session), a
// create_session command maps to it (FromCreate) and back (Create), the
// store keeps it (Stored, FromStored: the model and the user as the
// store's own fields, every other setting in one JSON object only this
// package reads and writes), and an export's config is made from it
// (Export). Validate is the one check of the options a session cannot
// have, whichever way they came.
//
// What a runtime resolves a Session into — the model's provider, the tool
// set, the plugin instances — is actors.Spec.
package spec

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
)

// Session describes a new session.
type Session struct {
	// ID names the session; empty generates one ("s-1", "s-2", ...).
	ID string
	// Model is `script:<path>` or a name the runtime's resolvers know; empty
	// means the configured default model.
	Model string
	// Script is an inline scripted model, used instead of Model's file.
	Script json.RawMessage
	// System is the system prompt.
	System string
	// Tools names the tools the model may call; scripted models bring the
	// demo tools along.
	Tools []string
	// Plugins configures the session's plugins by name (see WithPlugins).
	Plugins []plugins.Config
	// User is who the session belongs to: the HTTP server's caller, kept
	// with the stored session so that it survives restarts. Empty means
	// nobody in particular (tack rpc, tack chat).
	User string
	// Context bounds what each request carries and when the history is
	// compacted (docs/context.md); nil: no limit, no automatic compaction,
	// and a context overflow is an error.
	Context *llm.ContextConfig
	// Subagents configures the children the tool "subagent" starts
	// (docs/context.md); nil: the defaults (children get the session's
	// model, tools and plugins, and start no sub-agents of their own).
	Subagents *Subagents
	// QueueMode is how prompts queued while the agent works reach the
	// model: events.QueueOneAtATime (also when empty: each its own turn)
	// or events.QueueAll (all of them in the next turn, as one user
	// message joined by blank lines). See docs/control.md.
	QueueMode events.QueueMode
	// Agent names the agent (WithAgents) whose template the session
	// starts from: each field above that is left empty (Model with Script,
	// a nil Tools, Plugins, Context or Subagents) is the agent's.
	Agent string
}

// Validate reports options no session can have: an unknown queue mode,
// context bounds or sub-agent options out of range, an inline script or
// a plugin configuration that is not JSON. Names (of the model, tools,
// plugins, agent) are the runtime's to resolve.
func (s *Session) Validate() error {
	if err := events.CheckQueueMode(s.QueueMode); err != nil {
		return err
	}
	if len(s.Script) > 0 && !json.Valid(s.Script) {
		return errors.New("the inline script is not valid JSON")
	}
	for _, p := range s.Plugins {
		if len(p.Config) > 0 && !json.Valid(p.Config) {
			return fmt.Errorf("the configuration of plugin %q is not valid JSON", p.Name)
		}
	}
	if c := s.Subagents; c != nil {
		if err := c.Validate(); err != nil {
			return err
		}
	}
	if c := s.Context; c != nil {
		if err := c.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// DefaultMaxDepth is how deep sub-agents nest when a session's options
// say nothing: its children start none.
const DefaultMaxDepth = 1

// Subagents configures the children a session's subagent tool starts,
// and tells how deep the session itself sits. The store keeps it as JSON
// with the session's other settings (Session.Stored).
type Subagents struct {
	// MaxDepth is how deep sub-agents may nest: a session at depth d
	// starts children while d < MaxDepth. Nil means DefaultMaxDepth.
	MaxDepth *int `json:"max_depth,omitempty"`
	// Model is the children's model when a call names none; "" means the
	// parent's.
	Model string `json:"model,omitempty"`
	// Tools are the tools a child may have; nil means the parent's.
	Tools []string `json:"tools,omitempty"`
	// InheritPlugins says whether children get the parent's plugins; nil
	// means they do.
	InheritPlugins *bool `json:"inherit_plugins,omitempty"`
	// Depth is the session's own depth: 0 for a session a user made, one
	// more for each level of sub-agent. The runtime sets it for children.
	Depth int `json:"depth,omitempty"`
}

// Validate reports options no session can have.
func (c *Subagents) Validate() error {
	if c.MaxDepth != nil && *c.MaxDepth < 0 {
		return fmt.Errorf("subagents.max_depth must not be negative, not %d", *c.MaxDepth)
	}
	return nil
}

// Nesting is how deep sub-agents may nest: MaxDepth, or DefaultMaxDepth.
func (c *Subagents) Nesting() int {
	if c.MaxDepth == nil {
		return DefaultMaxDepth
	}
	return *c.MaxDepth
}

// Inherits reports whether children get the parent's plugins.
func (c *Subagents) Inherits() bool {
	return c.InheritPlugins == nil || *c.InheritPlugins
}
