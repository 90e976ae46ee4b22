// Package agentrun follows one run of a session for the transports that
// serve agents to other agent systems (MCP, A2A): it starts (or rejoins)
// a run and turns the session's events into the few steps such a caller
// cares about — pieces of the answer, a tool's progress, a pending
// approval or question, and the run's end with its answer.
package agentrun

import (
	"context"
	"errors"
	"math"
	"runtime/debug"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Kind says what a Step tells.
type Kind int

const (
	// Delta: Text is a piece of the answer as it streams.
	Delta Kind = iota + 1
	// Tool: a tool started, told progress or ended (Event is the
	// tool_execution_* event).
	Tool
	// Approval: the run waits for Approval to be approved or rejected.
	Approval
	// Question: the run waits for Question to be answered.
	Question
	// End: the run ended; Reason is agent_end's reason, Text the
	// answer (the last assistant message committed) and Error the last
	// error event's message, if any.
	End
)

// Step is one thing a followed run tells.
type Step struct {
	Kind     Kind
	Text     string
	Event    *eventsv1.Event
	Approval *eventsv1.ApprovalRequired
	Question *eventsv1.AskUser
	Reason   string
	Error    string
}

// Follower reads a session's live events for one run.
type Follower struct {
	// Session is the session followed.
	Session *tack.Session
	sub     *tack.Subscription
	answer  string
	err     string
}

// ErrNotTheirs is Continue's refusal of a session that exists but is not
// the caller's to continue: another user's, or of another agent (or of
// none). A transport answers it as it answers a session that does not
// exist, so that it tells nothing.
var ErrNotTheirs = errors.New("not the caller's session of this agent")

// Continue returns session id for user to continue at agent's endpoint:
// the runtime's error when there is no such session (invalid_session),
// ErrNotTheirs when it is another user's or another agent's.
func Continue(ctx context.Context, rt *tack.Runtime, id, user, agent string) (*tack.Session, error) {
	owner, err := rt.User(ctx, id)
	if err != nil {
		return nil, err
	}
	if owner != user {
		return nil, ErrNotTheirs
	}
	s, err := rt.Session(id)
	if err != nil {
		return nil, err
	}
	if a, err := s.Agent(ctx); err != nil {
		return nil, err
	} else if a != agent {
		return nil, ErrNotTheirs
	}
	return s, nil
}

// live subscribes to what happens from now on, none of the past.
const live = math.MaxUint64

// Prompt follows the run that answers text: it subscribes to the live
// events of s, then prompts it (a busy session queues the prompt, whose
// answer ends the run in progress).
func Prompt(ctx context.Context, s *tack.Session, text string) (*Follower, error) {
	f, err := Follow(ctx, s)
	if err != nil {
		return nil, err
	}
	if _, err := s.Prompt(ctx, text); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Follow follows what s does from now on: the caller then resumes a
// waiting run (approve, reject, respond) or rejoins a running one.
func Follow(ctx context.Context, s *tack.Session) (*Follower, error) {
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Since: live,
		Types: []string{"message_delta", "message_committed", "tool_execution_*", "approval_required", "ask_user", "error", "agent_end"}})
	if err != nil {
		return nil, err
	}
	return &Follower{Session: s, sub: sub}, nil
}

// ErrGone is Next's error when the session's events end before the run
// does (the session was closed or deleted).
var ErrGone = errors.New("agentrun: the session's events ended")

// Next returns the next step, waiting for it; ctx's end is its error.
func (f *Follower) Next(ctx context.Context) (Step, error) {
	for {
		var ev *eventsv1.Event
		select {
		case <-ctx.Done():
			return Step{}, ctx.Err()
		case e, ok := <-f.sub.C:
			if !ok {
				return Step{}, ErrGone
			}
			ev = e
		}
		switch p := ev.GetPayload().(type) {
		case *eventsv1.Event_MessageDelta:
			return Step{Kind: Delta, Text: p.MessageDelta.GetDelta(), Event: ev}, nil
		case *eventsv1.Event_MessageCommitted:
			if m := p.MessageCommitted.GetMessage(); m.GetRole() == "assistant" {
				f.answer = m.GetContent()
			}
		case *eventsv1.Event_ToolExecutionStart, *eventsv1.Event_ToolExecutionUpdate, *eventsv1.Event_ToolExecutionEnd:
			return Step{Kind: Tool, Event: ev}, nil
		case *eventsv1.Event_ApprovalRequired:
			return Step{Kind: Approval, Approval: p.ApprovalRequired, Event: ev}, nil
		case *eventsv1.Event_AskUser:
			return Step{Kind: Question, Question: p.AskUser, Event: ev}, nil
		case *eventsv1.Event_Error:
			f.err = p.Error.GetMessage()
		case *eventsv1.Event_AgentEnd:
			return Step{Kind: End, Reason: p.AgentEnd.GetReason(), Text: f.answer, Error: f.err, Event: ev}, nil
		}
	}
}

// Close ends the subscription.
func (f *Follower) Close() { _ = f.sub.Close() }

// Version is the tack module's version as built ("(devel)" from a
// checkout): what the agent servers tell their callers.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
