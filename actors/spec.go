package actors

import (
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/tools"
)

// Spec is one session's resolved setup: what its configuration (Stored:
// the system prompt, context bounds, sub-agents, queue mode...) names,
// resolved. The configuration is kept once, as the store writes it; a
// live session keeps its Spec for life (issue 30, finding 27).
type Spec struct {
	ID    string
	Model *llm.Model
	// Tools are the tools the model may call, plugins' tools included.
	Tools *tools.Set
	// Plugins are this session's own plugin instances.
	Plugins []plugins.Plugin
	// Restore, when set, is the stored session to take up.
	Restore *store.Snapshot
	// Unparked says Restore comes from the Park (Env.Park), which holds
	// the session's last event number exactly: the restored session goes
	// on numbering from it, where one restored from a Store skips past
	// numbers a client may have seen but the store did not record.
	Unparked bool
	// Stored is the session's configuration as the store keeps it (Model
	// as it was named, or the resolved model's name); the session writes
	// it anew after a model switch or a change of its tools. Its System
	// is the system prompt; its Context bounds requests and sets when the
	// history is compacted (nil for none: an overflow is then an error,
	// not a compaction); its Subagents configures the sub-agents the
	// subagent tool starts and tells the session's depth (nil: the
	// defaults at depth 0); its QueueMode is how queued prompts reach
	// the model (events.QueueOneAtATime, also when empty, or
	// events.QueueAll). Spawn makes it the one every session of an equal
	// configuration holds (spec.Share): read-only, its ID empty (ID names
	// the session), changed by a copy shared anew (nil: the zero Session).
	Stored *spec.Session
	// CompactModel writes summaries; nil means the session's model.
	CompactModel *llm.Model
	// Fork, when set, makes the new session a fork (fork.go).
	Fork *Fork
	// Parked makes a new session, in a runtime that parks its quiet
	// sessions (Env.Park), parked from the start (ParkNew): it starts on
	// its first command.
	Parked bool
	// StaysLoaded says the session's model would not be had again from
	// the name it is stored under (llm.ResolvesAgain): the session then
	// neither passivates nor parks, which would leave it without its
	// model, and is not made parked.
	StaysLoaded bool
}

// Shared is s with its configuration shared (spec.Share), as Spawn keeps
// it: what reads s.Stored before Spawn reads it this way.
func (s Spec) Shared() Spec {
	s.Stored = spec.Share(s.Stored)
	return s
}

// config is the session's configuration as the store keeps it, its ID
// the session's.
func (s *session) config() spec.Session {
	c := *s.spec.Stored
	c.ID = s.spec.ID
	return c
}

// reconfigure changes the session's stored configuration: a copy, by
// change, shared anew (Spec.Stored is read-only).
func (s *session) reconfigure(change func(*spec.Session)) {
	c := *s.spec.Stored
	change(&c)
	s.spec.Stored = spec.Share(&c)
}
