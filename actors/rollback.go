package actors

import (
	"github.com/tack-run/tack/actors/history"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

// A rollback (prompt if_busy rollback, abort rollback) takes every message
// a run added out of the working history once the run has stopped. The
// messages stay in the store, in their place, marked rolled_back, and
// get_messages with all returns them so marked; the provider never sees
// them (package history keeps them). A rollback rewrites the store's
// order from the working history's start in one write, as compaction
// does, so a crash leaves the history either before or after it. When a
// compaction during the run reached back over its start, the rollback
// brings the messages before the run back from the archive, and takes
// the summary out with the run's messages.

// rollBack takes the messages of the run c controls out of the working
// history: from c.from on or, when a compaction reached back into them,
// from where they started before it, the summary with them.
func (s *session) rollBack(c *control) {
	if c.start == nil && max(c.from, 0) >= s.hist.Len() {
		return
	}
	if s.compaction.running != nil {
		// Its cut counts messages that are leaving: it is dropped.
		s.compaction.running.cancel()
		s.compaction.running = nil
		s.emit(&eventsv1.CompactEnd{RemovedCount: 0})
	}
	if c.start != nil {
		s.hist.RollBackTo(*c.start)
	} else {
		s.hist.RollBack(c.from)
	}
	s.touch()
}

// recoveredFrom is where the run a restore takes up, paused, started: the
// store does not keep it, so the start of the turn of its open batch (the
// last user message before it) stands in.
func recoveredFrom(msgs []*llm.Message) int {
	for i := history.LastAssistant(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && !msgs[i].Summary {
			return i
		}
	}
	return len(msgs)
}
