package actors

import (
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/spec"
)

// A fork is a new session with its source's configuration whose history
// is the first messages of the source's working history. The source
// answers ForkPoint from what it has committed and stored, in any state; the caller
// (the root package) then creates the new session with Spec.Fork, which
// starts with that history: session_created, then session_forked.

// ForkPoint asks a session for the start of a fork: its first Index
// messages, moved back to a turn boundary. The answer is a *ForkSource,
// or a *eventsv1.Reply with the error bad_request when Index is out of
// range.
type ForkPoint struct {
	Index int
}

// ForkSource is a session's answer to ForkPoint.
type ForkSource struct {
	// Config is the session's configuration as the store keeps it (after
	// a model switch, naming the new model).
	Config spec.Session
	// Fork is what the new session starts from.
	Fork Fork
}

// Fork is the start of a forked session.
type Fork struct {
	// From is the session it was forked from.
	From string
	// Index is the number of messages it took: the asked index, moved back
	// to a turn boundary.
	Index int
	// Messages are its history.
	Messages []*llm.Message
}

// forkPoint answers ForkPoint once everything the session holds is
// stored and told (untold): a fork never starts from a message a crash
// then takes from its source.
func (s *session) forkPoint(ctx actor.Context, m *ForkPoint) {
	if s.untold(ctx) {
		return
	}
	msgs := s.hist.Messages()
	if m.Index < 0 || m.Index > len(msgs) {
		ctx.Respond(&eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: events.CodeBadRequest,
			Message: fmt.Sprintf("index %d is out of range: the history has %d messages", m.Index, len(msgs))}})
		return
	}
	n := TurnBoundary(msgs, m.Index)
	ctx.Respond(&ForkSource{
		Config: s.config(),
		Fork:   Fork{From: s.spec.ID, Index: n, Messages: slices.Clone(msgs[:n])},
	})
}

// TurnBoundary is the greatest n <= index such that msgs[:n] is a valid
// history for a provider: every tool call answered, no result without
// its call. An index inside a turn moves back to where the turn can be
// cut: before the tool calls that are not all answered within it.
func TurnBoundary(msgs []*llm.Message, index int) int {
	n := index
	for n > 0 && (msgs[n-1].Role == llm.RoleAssistant && len(msgs[n-1].ToolCalls) > 0 ||
		n < len(msgs) && msgs[n].Role == llm.RoleTool || llm.Validate(msgs[:n]) != nil) {
		n--
	}
	return n
}

// startFork gives a new forked session its history and tells it.
func (s *session) startFork() {
	f := s.spec.Fork
	if f == nil {
		return
	}
	s.spec.Fork = nil
	s.touch()
	s.hist.Fork(f.Messages)
	s.restoreTitle()
	s.emit(&eventsv1.SessionForked{FromSession: f.From, Index: int32(f.Index)})
}
