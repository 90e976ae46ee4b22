package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors/history"
	"github.com/tack-run/tack/actors/journal"
	"github.com/tack-run/tack/actors/queue"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store"
)

// Persistence keeps one rule: durable before visible. A change the store
// must keep (a committed message, a queued prompt, a held call, ...) closes
// the gate: from then on events and replies wait in the outbox until the
// write that holds the change is acknowledged. Writes run on a goroutine of
// their own, one at a time per session, so the actor never waits; a crash
// loses nothing a client was told.
//
// A write that fails for good (after the retries) takes the session down:
// what waited in the outbox is never told (replies become store_failed
// errors), the session goes back to what the store holds, and the run in
// progress ends with an error. While it is down, reads answer from memory
// and a command that would need a write waits for one try at the store: if
// the try lands the session is up again and the command goes through, if
// not the command is answered store_failed and nothing changed.

// seqCheckpoint is how far the event sequence may run ahead of the stored
// one before a write records it; a restored session numbers its events
// from the stored sequence plus seqGap, so it never reuses a number a
// client may have seen.
const (
	seqCheckpoint = 1 << 14
	seqGap        = 1 << 15
)

// persistence is a session's write state: its gate, and what the store
// holds besides the history.
type persistence struct {
	j          journal.Journal
	savedSeq   uint64 // event sequence stored
	savedTitle string // title stored
	// kept is the volatile state as stored: what a failed write falls back to.
	kept *store.Volatile
	// switched is set once the model was switched or the tools changed:
	// every write then carries the configuration.
	switched bool
	// landing has the outcome of the write that runs, besides the
	// mailbox, for a session that stops before it reads it there (land).
	landing chan *stored
}

// stored acknowledges a write: what it carried of the history is
// durable, and seq, and the volatile state kept.
type stored struct {
	err   error
	hist  history.Write
	seq   uint64
	title string
	kept  *store.Volatile
}

// rewrite asks for another try at a write that failed.
type rewrite struct{}

// writeTimeout bounds one try at a write, so a store that hangs rather than
// fails is given up on like one that fails: the four tries and their waits
// stay within the runtime's default command timeout of 10 s.
const writeTimeout = 1500 * time.Millisecond

// touch marks a change the store must keep before anyone hears of it.
func (s *session) touch() {
	s.notes.updated = s.stamp()
	if s.home.env.Store == nil {
		return
	}
	s.p.j.Touch()
}

// flush ends the handling of a message: it starts a write when changes
// wait, or a try at a store that is down is asked for, and none is under
// way; then, unless the gate is shut, it tells what the message's handler
// emitted and answered. So an event is told only once the message that
// emitted it is done: had its handler made a change after it (a run's
// start, emitted before the prompt it commits), the event waits for that
// change's write too. Receive calls it after every message but those of
// a session that has stopped: a write started then would store what
// shutdown refused, and land after a restore had read the store.
func (s *session) flush() {
	if s.home.env.Store == nil || s.load.stopped {
		return
	}
	s.write()
	s.p.j.Open(s.tell)
}

// write starts the write or the try flush asks for.
func (s *session) write() {
	if !s.p.j.Start(s.out.log.LastSeq() >= s.p.savedSeq+seqCheckpoint) {
		return
	}
	// A write that failed may have landed all the same (a commit whose
	// answer was lost): the first write after it replaces the history, so
	// the store holds exactly what the session does. A compaction or a
	// rollback writes the history anew from its start, in the same way.
	w := s.hist.Pending(s.p.j.Err() != nil)
	b := s.batch(w)
	if s.p.landing == nil {
		s.p.landing = make(chan *stored, 1)
	}
	st, id, home, obs, landing := s.home.env.Store, s.spec.ID, s.home, s.home.env.observer(), s.p.landing
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		start := time.Now()
		err := st.Apply(ctx, id, b)
		obs.StoreWrite(time.Since(start), err)
		cancel()
		m := &stored{err: err, hist: w, seq: b.EventSeq, title: b.Title, kept: b.Volatile}
		landing <- m // one write at a time, and stored takes it before the next
		home.post(m)
	}()
}

// land waits, as the session stops, for the write that runs, if one does,
// and takes it as stored would: what it stored is told and answered
// rather than refused, and it lands before the session's lease is given
// up or the session is restored here again. Stopping without it let the
// write land after a restore had read the store, and a prompt refused as
// the session stopped stay stored. The write's own timeout bounds the
// wait; a write that failed is left as it is, its changes refused. It
// reports whether the store took the session's writes: no write ran, or
// it landed.
func (s *session) land() bool {
	if !s.p.j.Writing() {
		return true
	}
	t := time.NewTimer(writeTimeout + time.Second)
	defer t.Stop()
	select {
	case m := <-s.p.landing:
		if m.err == nil {
			s.stored(m)
			return true
		}
	case <-t.C:
	}
	return false
}

// stored releases what the acknowledged write made safe to tell, or
// tries a failed write again, or takes the session down.
func (s *session) stored(m *stored) {
	select {
	case <-s.p.landing: // m, unless land took it
	default:
	}
	if m.err != nil {
		if d, ok := s.p.j.Failed(!errors.Is(m.err, store.ErrOwned)); ok {
			home := s.home
			time.AfterFunc(d, func() { home.post(&rewrite{}) })
			return
		}
		s.storeFailed(m.err)
		return
	}
	s.hist.Stored(m.hist)
	s.p.savedSeq, s.p.kept = m.seq, m.kept
	if m.title != "" {
		s.p.savedTitle = m.title
	}
	s.p.j.Landed(s.resend, s.tell)
}

// tell publishes an event, or sends an answer to the command that waits
// for it.
func (s *session) tell(it journal.Item) {
	if it.Event != nil {
		s.toStream(it.Event)
	} else if it.To != nil {
		s.home.send(it.To, it.Reply)
	}
}

// retryWrite tries a failed write again, with whatever changed since.
func (s *session) retryWrite() { s.p.j.Retry() }

// storeFailed takes the session down after a write that failed for good.
// The stored history is as it was (writes are all or nothing), so nothing
// that waited for the write is told: its events are dropped and its
// replies become errors. The session goes back to what the store holds
// and the run in progress ends; the error event is emitted once, when the
// session goes down, not for each failed try while it is down.
func (s *session) storeFailed(err error) {
	dropped, held, first := s.p.j.Down(err)
	refusal := s.refusal()
	var reads []journal.Item
	for _, it := range dropped {
		switch {
		case it.Read != nil:
			reads = append(reads, it)
		case it.Reply != nil:
			s.home.send(it.To, refused(it.Reply, refusal))
		}
	}
	for _, c := range held {
		if c.Sender != nil {
			s.home.send(c.Sender, &eventsv1.Reply{Error: refusal})
		}
	}
	if first {
		s.emit(&eventsv1.Error{Code: refusal.Code, Message: fmt.Sprintf("storing the session failed: %v", err)})
	}
	s.rollback(dropped)
	// A read changed nothing: it is answered from what the session went
	// back to, after the events that tell of it.
	for _, it := range reads {
		it.Reply = s.readReply(it.Read)
		s.p.j.Add(it)
	}
}

// refusal is the error a command that would need a write gets while the
// session is down: store_failed, or not_alive when another node owns it.
func (s *session) refusal() *eventsv1.ErrorInfo {
	code := codeStoreFailed
	if errors.Is(s.p.j.Err(), store.ErrOwned) {
		code = events.CodeNotAlive
	}
	return &eventsv1.ErrorInfo{Code: code, Message: fmt.Sprintf("the store did not take the write, nothing was changed: %v", s.p.j.Err())}
}

// refused is the answer a held reply becomes when its write failed for
// good: an error stays as it was, a success becomes the refusal.
func refused(r *eventsv1.Reply, refusal *eventsv1.ErrorInfo) *eventsv1.Reply {
	if r.Error != nil {
		return r
	}
	return &eventsv1.Reply{Error: refusal}
}

// rollback takes the session back to what the store holds, after dropped
// was thrown away unsaid: the stored messages, queues and rules (ids and
// usage keep counting). The run in progress is cancelled and goes idle.
// The run subscribers last heard of ends with agent_end reason error if
// its start was told but not its end, and a busy state that was told is
// left with state_changed.
func (s *session) rollback(dropped []journal.Item) {
	heard := s.machine.Current()
	if i := slices.IndexFunc(dropped, func(it journal.Item) bool { return it.Event.GetStateChanged() != nil }); i >= 0 {
		heard = fsm.State(dropped[i].Event.GetStateChanged().From)
	}
	if id, usage := s.endRolledBack(dropped); id != "" {
		if heard != fsm.Idle {
			s.emit(stateChanged(heard, fsm.Idle))
			s.emit(statusIdle)
		}
		s.emit(&eventsv1.AgentEnd{RunId: id, Reason: string(events.EndError), Usage: usage})
		s.trimLater()
	}
	s.hist.Revert()
	s.restoreTitle()
	kept := s.p.kept
	if kept == nil {
		kept = &store.Volatile{}
	}
	s.q = queue.Restore(kept)
	if s.hooks.later != nil {
		s.hooks.later.rules = nil
	}
	s.notes.todos = kept.Todos
	s.restoreRules(kept.Rules)
	// The calls of the last assistant message that have no result are
	// answered, so the history stays valid for the provider: with the
	// result the store kept (Volatile.Settled: its tool_execution_end was
	// told), else as interrupted. The answers are stored with the next
	// write, and no event tells them.
	s.hist.CloseCalls(interruptedByStore, settledResults(kept.Settled))
}

// settledResults are the results the store kept, as tool messages by
// call id.
func settledResults(settled []store.Settled) map[string]*llm.Message {
	out := make(map[string]*llm.Message, len(settled))
	for _, r := range settled {
		out[r.CallID] = llm.ToolResultMessage(r.CallID, r.Content, r.IsError)
	}
	return out
}

// endRolledBack cancels the run in progress, if any, and returns the run
// whose end subscribers are still owed, with its usage: the run in
// progress if its start was told (or an abort, which is never held), or
// else a run that ended while its last writes were in flight, its end
// dropped with them and its start told. It returns "" when there is none.
// (dropped is what followed the last write that landed, so only the
// newest run told of can be owed its end.)
func (s *session) endRolledBack(dropped []journal.Item) (string, *eventsv1.Usage) {
	if r := s.run; r != nil {
		s.cancelRun(r)
		if s.machine.Current() != fsm.Idle {
			from, to, err := s.machine.Fire(fsm.Abort)
			if err != nil {
				panic(err) // a bug: every busy state can abort
			}
			s.home.env.observer().StateChanged(from, to)
		}
		s.run = nil
		// The run ends with an error whether or not its start was told.
		s.home.env.observer().RunEnded(events.EndError)
		s.uncountRun()
		if r.aborted || told(dropped, r.id) {
			return r.id, r.usage.proto()
		}
	}
	for _, it := range dropped {
		if end := it.Event.GetAgentEnd(); end != nil && told(dropped, end.RunId) {
			return end.RunId, end.GetUsage()
		}
	}
	return "", nil
}

// told reports whether the start of run id reached subscribers, that is,
// was not among the dropped events.
func told(dropped []journal.Item, id string) bool {
	return !slices.ContainsFunc(dropped, func(it journal.Item) bool { return it.Event.GetAgentStart().GetRunId() == id })
}

// interruptedByStore is the result of a call whose result was lost with a
// failed write.
const interruptedByStore = "interrupted: the store failed"

// holdWhileDown holds a command that would need a write while the session
// is down, and asks for a try at the store: the command goes through if
// the try lands and is refused if not. An abort, a model switch or a
// compact that comes while commands are held is held behind them, so
// that the session takes them in the order they came: a prompt held and
// an abort sent after it took the abort first (at idle, a no-op), and the
// prompt's run then went on unaborted. It reports whether it held it.
func (s *session) holdWhileDown(ctx actor.Context) bool {
	if s.p.j.Err() == nil {
		return false
	}
	if !s.needsWrite(ctx.Message()) && !(s.p.j.Holding() && actsOnHeld(ctx.Message())) {
		return false
	}
	return s.p.j.Hold(journal.Held{Msg: ctx.Message(), Sender: ctx.Sender()})
}

// actsOnHeld reports whether msg is a command that acts on what the
// commands held before it would start.
func actsOnHeld(msg any) bool {
	switch msg.(type) {
	case *eventsv1.Abort, *eventsv1.SwitchModel, *eventsv1.Compact:
		return true
	}
	return false
}

// needsWrite reports whether a command changes what the store keeps.
func (s *session) needsWrite(msg any) bool {
	switch m := msg.(type) {
	case *eventsv1.Prompt, *eventsv1.Steer, *eventsv1.Approve, *eventsv1.Reject, *eventsv1.Respond,
		*eventsv1.AttachTools, *eventsv1.DetachTools:
		return true
	case *eventsv1.Abort:
		return m.ClearQueue && !s.q.Empty() || m.Rollback && s.run != nil
	}
	return false
}

// resend hands the held commands to the session again, from their senders,
// once the store took a write.
func (s *session) resend(held []journal.Held) {
	for _, c := range held {
		if c.Sender != nil {
			s.home.root().RequestWithCustomSender(s.home.self, c.Msg, c.Sender)
		} else {
			s.home.post(c.Msg)
		}
	}
}

// codeStoreFailed is the code of the error event for a failed write.
const codeStoreFailed = "store_failed"

// batch is everything not yet stored — w of the history — and the
// volatile state as a whole.
func (s *session) batch(w history.Write) *store.Batch {
	seq := s.out.log.LastSeq()
	for _, it := range s.p.j.Waiting() {
		if it.Event != nil {
			seq++
		}
	}
	b := &store.Batch{
		Owner:    s.home.env.Node,
		From:     w.From,
		Messages: w.Messages,
		Rewrite:  w.Rewrite,
		State:    string(s.machine.Current()),
		Usage:    s.notes.usage().total.proto(),
		EventSeq: seq,
		Volatile: s.volatile(),
	}
	if w.Rewrite {
		b.HistoryStart = w.Start
	}
	if s.notes.title != s.p.savedTitle {
		b.Title = s.notes.title
	}
	if s.p.switched {
		cfg := s.spec.Stored.Stored(s.spec.Stored.Model)
		b.Config = &cfg
	}
	return b
}

// volatile is the session's state besides its history.
func (s *session) volatile() *store.Volatile {
	v := &store.Volatile{
		Counters:      s.notes.ids,
		Todos:         s.notes.todos,
		DetachedTools: s.notes.detached,
	}
	s.q.Save(v)
	spent := s.notes.usage()
	if spent.subRan {
		v.SubagentUsage = spent.sub.proto()
	}
	v.ContextUsed, v.TokenScale = spent.context, spent.tokenScale
	v.ModelState = modelState(s.spec.Model)
	if r := s.run; r != nil && r.stream != nil && r.stream.model == s.spec.Model {
		v.ModelState = r.stream.modelState // the request in flight has not taken its turn for good
	}
	for _, r := range s.hooks.rules() {
		v.Rules = append(v.Rules, store.Rule{Tool: r.tool, CommandFamily: r.family})
	}
	if s.run == nil {
		return v
	}
	v.RunID, v.RunEnd = s.run.id, string(s.run.end)
	if s.run.batch != nil {
		v.Settled = s.run.batch.uncommitted()
	}
	approvals, question := s.pending()
	for _, a := range approvals {
		h := s.heldCall(a.ApprovalId, false).hold
		v.Approvals = append(v.Approvals, store.Approval{Pending: a, Deadline: h.deadline, Family: h.family, Hint: h.hint, AutoResume: h.autoResume})
	}
	if question != nil {
		v.Question = &store.Question{Pending: question}
	}
	return v
}

// Settle asks a session to answer once everything it has told is stored
// (deliver holds the answer until then): the Registry waits for it after a
// restore. A store that fails the write makes the answer a store_failed
// error.
type Settle struct{}

// deliver answers a request once its message is handled (see flush).
// While changes wait for a write, every answer waits too, behind the
// events already held: the answer to a command that made a change once
// the change is stored, and a read (get_state, get_messages) once
// everything it could show is stored and told, so a reader never sees
// what a subscriber has not been told yet.
func (s *session) deliver(ctx actor.Context, r *eventsv1.Reply) {
	s.deliverItem(ctx, journal.Item{To: ctx.Sender(), Reply: r})
}

// deliverItem is deliver for an answer it has made into a journal item.
func (s *session) deliverItem(ctx actor.Context, it journal.Item) {
	if s.home.env.Store == nil {
		ctx.Respond(it.Reply)
		return
	}
	s.p.j.Add(it)
}

// publish queues an event for flush to tell (with no store, tells it at
// once). agent_abort is never held: it changes nothing the store keeps, and
// it must reach subscribers at once even while a write is slow or failing,
// so it may overtake events that wait for a write.
func (s *session) publish(ev *eventsv1.Event) {
	if s.home.env.Store == nil || ev.GetAgentAbort() != nil {
		s.toStream(ev)
		return
	}
	s.p.j.Add(journal.Item{Event: ev})
}
