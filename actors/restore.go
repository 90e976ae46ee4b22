package actors

import (
	"slices"
	"time"

	"github.com/tack-run/tack/actors/history"
	"github.com/tack-run/tack/actors/queue"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/tools"
)

// recover takes a session up from the store: the history as stored, the
// queues, rules, counters, usage totals and the model's own state; tool calls without
// results are answered "interrupted: process restarted", except those held
// for an approval or a question, which pause a run that goes on once they
// are answered. What it finds is written back at once, so the store too
// shows the session as it is now.
func (s *session) recover(snap *store.Snapshot) {
	s.takeUp(snap)
	v := snap.Volatile
	b, interrupted := s.openBatch(v)
	held := b != nil && b.holding()
	s.takeUpRun(held)
	if snap.State == string(fsm.Idle) && interrupted == 0 && !held && v.RunID == "" {
		return
	}
	s.touch()
	rec := &eventsv1.AgentRecovered{FromState: snap.State, InterruptedCalls: int32(interrupted), Resumed: held}
	if v.RunID != "" {
		rec.RunId = &v.RunID
	}
	if held {
		s.run = newRun(s.notes.ids.Runs, v.RunID) // counted (takeUpRun)
		s.run.batch = b
		s.run.end = events.EndReason(v.RunEnd) // a rejection that ends the run once the batch is done
		s.run.ctl.from = recoveredFrom(s.hist.Messages())
		s.emit(rec)
		s.commitSettled(b)
		s.restartTimers(b)
		return
	}
	s.emit(rec)
	if b != nil {
		s.commitSettled(b)
	}
	if v.RunID != "" {
		s.home.env.observer().RunEnded(events.EndInterrupted)
		s.emit(&eventsv1.AgentEnd{RunId: v.RunID, Reason: string(events.EndInterrupted), Usage: (tally{}).proto()})
	}
}

// startUnstarted starts a session that was made but never started: one
// import_session made from snap, a new session whose history, todos,
// title and usage are the document's, or one made parked (ParkNew),
// whose record holds nothing yet. It is told as a new session is
// (session_created, its events numbered from 1: newStream), and takes the
// history as it is: a call the document left without its result
// (exported while it waited for a person) stays so, and the next request
// to the model repairs it, as for any history; nothing was interrupted
// here. An import's first write stores it without Unstarted, so that a
// later restore is a restore; one made parked was updated when it was
// made, as its record says.
func (s *session) startUnstarted(snap *store.Snapshot) {
	s.takeUp(snap)
	if !s.spec.Unparked {
		s.touch()
	}
	s.emit(sessionCreated(s.spec.Model.Name))
}

// takeUp makes what snap holds the session's: history, queues, title,
// todos, detached tools, counters, usage, rules and the model's state.
func (s *session) takeUp(snap *store.Snapshot) {
	v := snap.Volatile
	s.hist = history.Restore(snap.Messages, snap.HistoryStart)
	s.p.savedSeq = snap.EventSeq
	s.p.savedTitle, s.notes.updated = snap.Title, snap.UpdatedAt.UnixNano()
	s.restoreTitle()
	s.q, s.notes.todos = queue.Restore(&v), v.Todos
	s.restoreDetached(v.DetachedTools)
	s.notes.ids = v.Counters
	if v.SubagentUsage != nil {
		spent := s.notes.spending()
		spent.sub, spent.subRan = tallyOf(v.SubagentUsage), true
	}
	if t := tallyOf(snap.Usage); t != (tally{}) {
		s.notes.spending().total = t
	}
	if v.ContextUsed != 0 || v.TokenScale != 0 {
		spent := s.notes.spending()
		spent.context, spent.tokenScale = v.ContextUsed, v.TokenScale
	}
	s.restoreRules(v.Rules)
	s.loadModelState(v.ModelState)
}

// openBatch rebuilds the batch of the last assistant message if any of its
// tool calls lacks a result: answered calls keep theirs (the history's,
// or those the store kept behind a held call), held ones wait
// again, the rest are answered "interrupted: process restarted". It
// returns nil when nothing is open, and the number of calls interrupted.
func (s *session) openBatch(v store.Volatile) (*batch, int) {
	msgs := s.hist.Messages()
	ai := history.LastAssistant(msgs)
	if ai < 0 || len(msgs[ai].ToolCalls) == 0 {
		return nil, 0
	}
	answered := map[string]*tools.Result{}
	for _, m := range msgs[ai+1:] {
		if m.Role == "tool" {
			answered[m.ToolCallId] = &tools.Result{Content: m.Content, IsError: m.IsError}
		}
	}
	settled := map[string]*tools.Result{}
	for _, r := range v.Settled {
		settled[r.CallID] = &tools.Result{Content: r.Content, IsError: r.IsError}
	}
	holds := map[string]*hold{}
	for _, a := range v.Approvals {
		holds[a.Pending.CallId] = &hold{id: a.Pending.ApprovalId, family: a.Family, hint: a.Hint, autoResume: a.AutoResume, deadline: a.Deadline}
	}
	if q := v.Question; q != nil {
		holds[q.Pending.CallId] = &hold{id: q.Pending.Ref, question: true, text: q.Pending.Question, options: q.Pending.Options}
	}
	b, interrupted := &batch{}, 0
	for i, tc := range msgs[ai].ToolCalls {
		c := &call{index: i, tc: tc, args: tc.GetArgs().GetJson()}
		b.calls = append(b.calls, c)
		switch {
		case answered[tc.Id] != nil:
			c.result, c.committed = answered[tc.Id], true
		case settled[tc.Id] != nil:
			c.result = settled[tc.Id]
		case holds[tc.Id] != nil:
			c.hold = holds[tc.Id]
		default:
			c.result = &tools.Result{Content: tools.InterruptedByRestart, IsError: true}
			interrupted++
		}
	}
	if !slices.ContainsFunc(b.calls, func(c *call) bool { return !c.committed }) {
		return nil, 0
	}
	return b, interrupted
}

// commitSettled commits the results of the batch's calls that are not
// committed yet, in call order, up to the first call still waiting: the
// history takes a batch's results in the order the model listed the
// calls. What comes back behind a call held for a person waits, kept in
// the store's volatile state (uncommitted), until that call is answered.
func (s *session) commitSettled(b *batch) {
	for _, c := range b.calls {
		if c.result == nil {
			return
		}
		if !c.committed {
			c.committed = true
			s.commit(llm.ToolResultMessage(c.tc.Id, c.result.Content, c.result.IsError))
		}
	}
}

// uncommitted lists the results of the batch's settled calls that wait
// behind a call still waiting, for the store (Volatile.Settled).
func (b *batch) uncommitted() []store.Settled {
	var out []store.Settled
	for _, c := range b.calls {
		if c.uncommitted() {
			out = append(out, store.Settled{CallID: c.tc.Id, Content: c.result.Content, IsError: c.result.IsError})
		}
	}
	return out
}

// restartTimers sets the timeouts of recovered approvals again: one whose
// deadline passed while the process was down times out at once.
func (s *session) restartTimers(b *batch) {
	for _, c := range b.calls {
		if c.held() && !c.hold.question {
			t, id := s.run.tag(), c.hold.id
			c.hold.timer = time.AfterFunc(max(c.hold.deadline.Sub(s.home.env.now()), 0), func() {
				s.home.post(&holdExpired{tag: t, id: id})
			})
		}
	}
}
