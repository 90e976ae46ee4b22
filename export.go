package tack

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/inlinetag"
	"github.com/tack-run/tack/placement"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/tools"
)

// ExportFormat is the format of the documents Export writes and Import
// reads (docs/sessions.md).
const ExportFormat = "tack.session/v1"

// Export returns the whole session as one document (export_session): the
// create_session configuration that makes a session like it, every
// message it committed (compacted and rolled_back marked, as AllMessages
// marks them), its todos, title and usage. It works in any state, from
// what the session has committed.
func (s *Session) Export(ctx context.Context) (*eventsv1.SessionExport, error) {
	return s.rt.reach.export(ctx, s)
}

// export asks the session's actor for what it has committed.
func (l *local) export(ctx context.Context, s *Session) (*eventsv1.SessionExport, error) {
	e, err := askFound[*actors.Exported](ctx, l.rt, s.id, func() (*actor.PID, error) { return l.actor(ctx, s) }, &actors.ExportPoint{})
	if err != nil {
		return nil, err
	}
	return &eventsv1.SessionExport{Format: ExportFormat, Session: s.id, Config: &eventsv1.RawJSON{Json: e.Config.Export()},
		Messages: e.Messages, Todos: e.Todos, Title: e.Title, Usage: e.Usage, SubagentUsage: e.SubagentUsage,
		ExportedAt: eventjson.Timestamp(s.rt.now())}, nil
}

// askFound asks the actor of session id, which find finds, msg, whose
// answer is a T, for the user ctx names (ForUser): a session gone
// meanwhile, or another user's, is invalid_session, one that does not
// answer in time not_alive, an error it answers that error. In a runtime
// that passivates, the actor found may park or store itself before it
// answers (a dead letter): the session is found again, which wakes it.
func askFound[T any](ctx context.Context, rt *Runtime, id string, find func() (*actor.PID, error), msg any) (T, error) {
	var zero T
	for try := 1; ; try++ {
		pid, err := find()
		if err != nil {
			return zero, err
		}
		f := actor.NewFuture(rt.system, rt.timeoutFor(ctx))
		rt.system.Root.Send(pid, envelope(ctx, msg, f.PID()))
		res, err := f.Result()
		if errors.Is(err, actor.ErrDeadLetter) { // gone meanwhile
			if rt.env.Passivates() && try < findTries {
				continue
			}
			return zero, registryError(id, placement.ErrNoSession)
		}
		if err != nil {
			return zero, &Error{Code: events.CodeNotAlive, Message: fmt.Sprintf("session did not answer: %v", err)}
		}
		if r, ok := res.(*eventsv1.Reply); ok && r.Error != nil {
			return zero, errorFrom(r.Error)
		}
		t, ok := res.(T)
		if !ok {
			return zero, &Error{Code: events.CodeInternal, Message: fmt.Sprintf("unexpected reply %T", res)}
		}
		return t, nil
	}
}

// findTries bounds how many times askFound finds a session's actor: each
// time but the last, the actor it found had parked before it answered.
const findTries = 4

// History is what an imported session starts from besides its
// configuration (Import).
type History struct {
	// Messages are every message of the session, in order: those marked
	// Compacted first (what compaction replaced; they stay out of the
	// working history), the rest the working history, where those marked
	// RolledBack stay out too.
	Messages []*llm.Message
	// Todos, Title, Usage and SubagentUsage are the session's (nil usage:
	// none yet).
	Todos         []*eventsv1.Todo
	Title         string
	Usage         *eventsv1.Usage
	SubagentUsage *eventsv1.Usage
}

// Import makes an idle session of cfg.User (import_session) with cfg's
// configuration — checked and granted as Spawn checks it — and h's
// history and state; cfg.ID names it, or an id is generated. Exporting
// it gives h back, but for a title that is not one a prompt gives (it is
// cut as a prompt's is: inlinetag.CutTitle) and tool calls whose names no
// provider accepts (named invalid_tool_name, as a model's are). A
// history the runtime cannot take (a role it does not know, compacted
// messages after working ones, an image a prompt could not carry or one
// on another role, text a store cannot keep) is bad_request, and nothing
// is made.
func (rt *Runtime) Import(ctx context.Context, cfg SessionConfig, h History) (*Session, error) {
	cfg, err := rt.withAgent(cfg) // a document written by hand may name an agent, as create_session may
	if err != nil {
		return nil, err
	}
	if cfg.ID != "" {
		if err := checkID("session", cfg.ID); err != nil {
			return nil, err
		}
	}
	snap, err := importSnapshot(h, rt.env.MaxImageBytes)
	if err != nil {
		return nil, err
	}
	return rt.reach.importSession(ctx, cfg, snap)
}

// importSession makes the session here, restored from snap.
func (l *local) importSession(ctx context.Context, cfg SessionConfig, snap *store.Snapshot) (*Session, error) {
	rt := l.rt
	return l.create(ctx, cfg.ID, cfg, func(id string) (actors.Spec, error) {
		spec, err := rt.spec(id, cfg, refuse)
		if err == nil {
			s := *snap
			s.ID, s.Config, s.UpdatedAt = id, spec.Stored.Stored(spec.Model.Name), rt.now()
			spec.Restore = &s
		}
		return spec, err
	})
}

// importSession is Import for a runtime whose sessions live elsewhere:
// the session is written to the shared store, for the process that uses
// it first to restore.
func (r remote) importSession(ctx context.Context, cfg SessionConfig, snap *store.Snapshot) (*Session, error) {
	rt := r.rt
	if err := rt.permitElsewhere(cfg); err != nil {
		return nil, err
	}
	release, err := rt.admitSession(cfg.User)
	if err != nil {
		return nil, err
	}
	defer release()
	generate := cfg.ID == ""
	for try := 1; ; try++ {
		id := cfg.ID
		if generate {
			id = rt.newID()
		}
		err := actors.Record(ctx, rt.env.Store, id, cfg, snap)
		if generate && try < generatedTries && errors.Is(err, store.ErrExists) {
			continue
		}
		if errors.Is(err, store.ErrExists) {
			return nil, registryError(id, placement.ErrSessionExists)
		}
		if err != nil {
			return nil, registryError(id, err)
		}
		return &Session{id: id, rt: rt}, nil
	}
}

// importSnapshot checks an imported history — its images as a prompt's
// are checked, against maxBytes — and makes the idle session it
// describes: the leading compacted messages before its history start,
// every mark but rolled_back taken off (the store keeps that one in the
// message), each tool call whose name no provider accepts named
// actors.InvalidToolName, and the title cut as a prompt's is
// (inlinetag.CutTitle).
func importSnapshot(h History, maxBytes int64) (*store.Snapshot, error) {
	bad := func(format string, args ...any) error {
		return &Error{Code: events.CodeBadRequest, Message: fmt.Sprintf(format, args...)}
	}
	start := 0
	msgs := make([]*llm.Message, len(h.Messages))
	for i, m := range h.Messages {
		switch {
		case m == nil:
			return nil, bad("message %d is empty", i)
		case !slices.Contains([]string{llm.RoleUser, llm.RoleAssistant, llm.RoleTool}, m.Role):
			return nil, bad("message %d has role %q: want user, assistant or tool", i, m.Role)
		case m.Compacted && start != i:
			return nil, bad("message %d is compacted but follows working messages: compacted messages come first", i)
		case m.Compacted:
			start++
		}
		if len(m.Images) > 0 && m.Role != llm.RoleUser {
			return nil, bad("message %d (%s) has images: only user messages have them", i, m.Role)
		}
		if err := llm.CheckImages(m.Images, maxBytes); err != nil {
			return nil, bad("message %d: %v", i, err)
		}
		c := proto.Clone(m).(*llm.Message)
		c.Compacted = false
		for _, tc := range c.ToolCalls {
			if tc != nil && !tools.ValidName(tc.Name) {
				tc.Name = actors.InvalidToolName
			}
		}
		msgs[i] = c
	}
	usage := h.Usage
	if usage == nil {
		usage = &eventsv1.Usage{}
	}
	if err := checkUsage(usage); err != nil {
		return nil, bad("usage: %v", err)
	}
	if err := checkUsage(h.SubagentUsage); err != nil {
		return nil, bad("subagent_usage: %v", err)
	}
	return &store.Snapshot{
		Session:  store.Session{State: "idle", MessageCount: len(msgs), HistoryStart: start, Title: inlinetag.CutTitle(h.Title), Usage: usage},
		Volatile: store.Volatile{Todos: h.Todos, SubagentUsage: h.SubagentUsage, Unstarted: true},
		Messages: msgs,
	}, nil
}

// maxTokens bounds each token count of an imported usage: 2^53, far
// past what a session spends, and small enough that the totals a session
// adds up from it never wrap around.
const maxTokens = 1 << 53

// checkUsage refuses usage that no session could have spent: a negative
// count or one past maxTokens, a cost that is negative or not a number. A
// session's limits (the limits plugin's max_session_tokens) count from
// it.
func checkUsage(u *eventsv1.Usage) error {
	if u == nil {
		return nil
	}
	counts := []struct {
		name string
		n    int64
	}{{"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens}, {"total_tokens", u.TotalTokens},
		{"cached_input_tokens", u.CachedInputTokens}, {"reasoning_tokens", u.ReasoningTokens}}
	for _, c := range counts {
		switch {
		case c.n < 0:
			return fmt.Errorf("%s is negative (%d)", c.name, c.n)
		case c.n > maxTokens:
			return fmt.Errorf("%s is %d: more than any session spends (%d)", c.name, c.n, int64(maxTokens))
		}
	}
	if c := u.CostUsd; c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		return fmt.Errorf("cost_usd is %v: want a finite amount, at least 0", c)
	}
	return nil
}
