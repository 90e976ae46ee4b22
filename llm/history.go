package llm

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// Validate checks the history invariant (guarantee 2 of docs/architecture.md) and
// returns an error describing the first violation, or nil:
//
//   - every message has role user, assistant or tool;
//   - every tool call has a non-empty id, unique in the history;
//   - every tool call has exactly one tool result after its assistant
//     message and before the next user or assistant message;
//   - every tool result answers a call of the assistant message before it
//     (none orphaned, none duplicated).
//
// Results need not be in the order of the calls.
func Validate(msgs []*Message) error {
	var first error
	scan(msgs, nil, func(p problem) bool {
		first = fmt.Errorf("llm: invalid history: %s", p)
		return false
	})
	return first
}

// Repair returns a history that passes Validate, and a description of each
// change. A valid history comes back as the same slice with no fixes.
// Otherwise:
//
//   - a message with an unknown role is dropped;
//   - a tool call without an id, or with an id used before, is dropped
//     from (a clone of) its assistant message;
//   - a missing tool result becomes an error result with NoResultText,
//     placed right after the other results of its assistant message;
//   - an orphaned or duplicated tool result is dropped.
//
// msgs and its messages are not modified; out shares the unchanged
// messages with msgs.
func Repair(msgs []*Message) (out []*Message, fixes []string) {
	out = make([]*Message, 0, len(msgs))
	scan(msgs, &out, func(p problem) bool {
		fixes = append(fixes, p.fix())
		return true
	})
	if len(fixes) == 0 {
		return msgs, nil
	}
	return out, fixes
}

// scan walks msgs and reports each problem until report returns false.
// When out is not nil it also appends the repaired history to *out.
func scan(msgs []*Message, out *[]*Message, report func(problem) bool) {
	s := scanner{out: out, report: report, seen: map[string]bool{}, answered: map[string]bool{}}
	for i, m := range msgs {
		if s.stopped {
			return
		}
		switch m.GetRole() {
		case RoleUser:
			s.closeBatch()
			s.emit(m)
		case RoleAssistant:
			s.closeBatch()
			s.assistant(i, m)
		case RoleTool:
			s.result(i, m)
		default:
			s.problem(problem{kind: unknownRole, index: i, role: m.GetRole()})
		}
	}
	s.closeBatch()
}

// scanner is the state of one scan.
type scanner struct {
	out     *[]*Message
	report  func(problem) bool
	stopped bool
	// seen holds every tool call id so far.
	seen map[string]bool
	// batch holds the calls of the open batch, the last assistant message's,
	// and batchIndex that message's index.
	batch      []*ToolCall
	batchIndex int
	// answered tells, for each call of the batch, whether it has a result.
	answered map[string]bool
}

func (s *scanner) emit(m *Message) {
	if s.out != nil {
		*s.out = append(*s.out, m)
	}
}

func (s *scanner) problem(p problem) {
	if !s.stopped && !s.report(p) {
		s.stopped = true
	}
}

// assistant checks the tool call ids of m and opens its batch.
func (s *scanner) assistant(i int, m *Message) {
	calls := m.GetToolCalls()
	keep := make([]bool, len(calls))
	dropped := false
	for j, c := range calls {
		id := c.GetId()
		switch {
		case id == "":
			s.problem(problem{kind: callWithoutID, index: i, name: c.GetName()})
		case s.seen[id]:
			s.problem(problem{kind: duplicateCallID, index: i, callID: id})
		default:
			s.seen[id] = true
			keep[j] = true
			continue
		}
		dropped = true
	}
	if dropped {
		m = withCalls(m, keep)
	}
	s.emit(m)
	s.batch, s.batchIndex = m.GetToolCalls(), i
	for _, c := range s.batch {
		s.answered[c.GetId()] = false
	}
}

// result accepts m if it answers an unanswered call of the open batch.
func (s *scanner) result(i int, m *Message) {
	id := m.GetToolCallId()
	done, open := s.answered[id]
	switch {
	case !open:
		s.problem(problem{kind: orphanResult, index: i, callID: id})
	case done:
		s.problem(problem{kind: duplicateResult, index: i, callID: id})
	default:
		s.answered[id] = true
		s.emit(m)
	}
}

// closeBatch adds a result for each unanswered call of the open batch.
func (s *scanner) closeBatch() {
	for _, c := range s.batch {
		if !s.answered[c.GetId()] {
			s.problem(problem{kind: missingResult, index: s.batchIndex, callID: c.GetId()})
			s.emit(ToolResultMessage(c.GetId(), NoResultText, true))
		}
	}
	s.batch = nil
	clear(s.answered)
}

// withCalls returns a clone of m keeping the tool calls marked in keep.
func withCalls(m *Message, keep []bool) *Message {
	c := proto.Clone(m).(*Message)
	calls := c.ToolCalls[:0]
	for j, tc := range c.ToolCalls {
		if keep[j] {
			calls = append(calls, tc)
		}
	}
	c.ToolCalls = calls
	return c
}
