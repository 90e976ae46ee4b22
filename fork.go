package tack

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/placement"
)

// Fork makes a new session, named newID (generated when empty), with this
// session's configuration — model, system prompt, tools, plugins, context
// options, queue mode and user — and the first index messages of its
// working history, moved back to a turn boundary so that the history is
// valid for a provider. The new session's first events are
// session_created and session_forked (from_session, and the index
// actually used). It works whatever this session is doing: the fork sees
// the committed history only. An index below 0 or beyond the history is
// bad_request.
func (s *Session) Fork(ctx context.Context, index int, newID string) (*Session, error) {
	if newID != "" {
		if err := checkID("new_session", newID); err != nil {
			return nil, err
		}
	}
	return s.rt.reach.fork(ctx, s, index, newID)
}

// fork takes the fork point from the session's actor and makes the new
// session here, with a copy of the workspace.
func (l *local) fork(ctx context.Context, s *Session, index int, newID string) (*Session, error) {
	rt := l.rt
	// The workspace is opened before the session is asked: if it answers,
	// what was opened is its own, whatever becomes of its id after.
	ws, err := rt.workspaces.OpenSource(s.id)
	if err != nil {
		return nil, &Error{Code: events.CodeInternal, Message: fmt.Sprintf("fork: opening the workspace: %v", err)}
	}
	defer ws.Close()
	src, err := askFound[*actors.ForkSource](ctx, rt, s.id, func() (*actor.PID, error) { return l.actor(ctx, s) }, &actors.ForkPoint{Index: index})
	if err != nil {
		return nil, err
	}
	// The copy is made before the fork exists: a copy can take seconds,
	// and a fork closed meanwhile (without a store its id is free then)
	// could have its id taken by another user's session, which the fork
	// would then have taken for its own.
	staged, err := ws.Stage()
	if err != nil {
		return nil, &Error{Code: events.CodeInternal, Message: fmt.Sprintf("fork: copying the workspace: %v", err)}
	}
	defer staged.Discard()
	cfg := src.Config
	cfg.ID = newID
	fork, err := l.create(ctx, newID, cfg, func(id string) (actors.Spec, error) {
		spec, err := rt.spec(id, cfg, drop)
		spec.Stored, spec.Fork = &src.Config, &src.Fork
		return spec, err
	})
	if err != nil {
		return nil, err
	}
	// A fork goes its own way from here: its workspace is the copy.
	if err := staged.Place(fork.id); err != nil {
		// No fork is better than one without its files.
		_ = l.remove(ctx, fork.id, placement.DeleteOptions{})
		return nil, &Error{Code: events.CodeInternal, Message: fmt.Sprintf("fork: placing the workspace's copy: %v", err)}
	}
	return fork, nil
}
