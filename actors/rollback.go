package actors

import (
	"slices"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

// A rollback (prompt if_busy rollback, abort rollback) takes every message
// a run added out of the working history once the run has stopped. The
// messages stay in the store, in their place, marked rolled_back (the
// flag travels in the stored message itself), and get_messages with all
// returns them so marked; the provider never sees them. In memory they sit
// in rolled, each span with the working-history index it sits before, and
// the store's order of the messages from base on is the working history
// with the spans put back (storedView). A rollback rewrites that order
// from base in one write, as compaction does, so a crash leaves the
// history either before or after it.

// rolledSpan is messages a rollback took out, sitting before working
// history index at.
type rolledSpan struct {
	at   int
	msgs []*llm.Message
}

// rewind is the working history before a change the store does not hold
// yet (a compaction or a rollback): what a failed write goes back to.
type rewind struct {
	history []*llm.Message
	rolled  []rolledSpan
}

// rollBack takes history[from:] out of the working history.
func (s *session) rollBack(from int) {
	from = max(from, 0)
	if from >= len(s.history) {
		return
	}
	if s.compacting != nil {
		// Its cut counts messages that are leaving: it is dropped.
		s.compacting.cancel()
		s.compacting = nil
		s.emit(&eventsv1.CompactEnd{RemovedCount: 0})
	}
	s.keepBefore()
	out := make([]*llm.Message, len(s.history)-from)
	for i, m := range s.history[from:] {
		c := proto.Clone(m).(*llm.Message)
		c.RolledBack = true
		out[i] = c
	}
	s.rolled = append(s.rolled, rolledSpan{at: from, msgs: out})
	s.history = slices.Clip(s.history[:from])
	s.checked = min(s.checked, from)
	s.rollbacks++
	s.touch()
}

// keepBefore records the history as the store holds it before a change
// that rewrites it, unless one such change is already unsaved (then the
// record is older still, and right).
func (s *session) keepBefore() {
	if s.rewritePending() {
		return
	}
	s.p.before = &rewind{history: s.history, rolled: slices.Clone(s.rolled)}
}

// rewritePending reports whether the store has yet to take a compaction
// or a rollback.
func (s *session) rewritePending() bool {
	return s.base != s.p.savedBase || s.rollbacks != s.p.savedRollbacks
}

// rolledCount is the number of rolled-back messages from base on.
func (s *session) rolledCount() int {
	n := 0
	for _, sp := range s.rolled {
		n += len(sp.msgs)
	}
	return n
}

// callsOutside counts the tool calls the session made that are not in
// its working history: those compaction archived and those rollbacks took
// out. The scripted model numbers its call ids after every call of the
// session, so an id never comes back after either.
func (s *session) callsOutside() int {
	n := s.archivedCalls
	for _, sp := range s.rolled {
		n += countCalls(sp.msgs)
	}
	return n
}

// storedView is the messages from base on in the store's order: the
// working history with the rolled-back spans in their places.
func (s *session) storedView() []*llm.Message {
	return interleave(s.history, s.rolled)
}

// interleave puts spans back into history.
func interleave(history []*llm.Message, spans []rolledSpan) []*llm.Message {
	out := make([]*llm.Message, 0, len(history))
	i := 0
	for _, sp := range spans {
		out = append(out, history[i:sp.at]...)
		out = append(out, sp.msgs...)
		i = sp.at
	}
	return append(out, history[i:]...)
}

// splitRolled separates stored messages into the working history and the
// rolled-back spans: what a restore does.
func splitRolled(msgs []*llm.Message) (history []*llm.Message, spans []rolledSpan) {
	for _, m := range msgs {
		if !m.RolledBack {
			history = append(history, m)
			continue
		}
		if n := len(spans); n > 0 && spans[n-1].at == len(history) {
			spans[n-1].msgs = append(spans[n-1].msgs, m)
		} else {
			spans = append(spans, rolledSpan{at: len(history), msgs: []*llm.Message{m}})
		}
	}
	return history, spans
}

// compactRolled moves the spans that sit within history[:cut] to the
// archive side of a compaction: it returns the messages the archive takes
// (history[:cut] with those spans in place) and shifts the others past
// the summary that replaces history[:cut].
func (s *session) compactRolled(cut int) []*llm.Message {
	var in, kept []rolledSpan
	for _, sp := range s.rolled {
		if sp.at <= cut {
			in = append(in, sp)
		} else {
			kept = append(kept, rolledSpan{at: sp.at - cut + 1, msgs: sp.msgs})
		}
	}
	s.rolled = kept
	if s.run != nil {
		s.run.ctl.from = max(s.run.ctl.from-cut+1, 1)
	}
	return interleave(s.history[:cut], in)
}

// recoveredFrom is where the run a restore takes up, paused, started: the
// store does not keep it, so the start of the turn of its open batch (the
// last user message before it) stands in.
func recoveredFrom(history []*llm.Message) int {
	for i := lastAssistant(history) - 1; i >= 0; i-- {
		if history[i].Role == llm.RoleUser && !history[i].Summary {
			return i
		}
	}
	return len(history)
}
