package actors

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/store"
)

// ExportPoint asks a session for everything an export holds; the answer
// is an *Exported. It is answered from what the session has committed, in
// any state.
type ExportPoint struct{}

// Exported is a session's answer to ExportPoint.
type Exported struct {
	// Config is the session's configuration as the store keeps it.
	Config spec.Session
	// Messages are every message the session committed, in order, marked
	// as get_messages with all marks them.
	Messages []*llm.Message
	// Todos, Title, Usage and SubagentUsage are as get_state shows them
	// (SubagentUsage nil when no sub-agent ran).
	Todos         []*eventsv1.Todo
	Title         string
	Usage         *eventsv1.Usage
	SubagentUsage *eventsv1.Usage
}

// ConfigPoint asks a session for its configuration as the store keeps it
// (Exported's Config, without the rest); the answer is a *spec.Session.
type ConfigPoint struct{}

// exportPoint answers ExportPoint once everything the session holds is
// stored and told (untold).
func (s *session) exportPoint(ctx actor.Context) {
	if s.untold(ctx) {
		return
	}
	st := s.state()
	ctx.Respond(&Exported{Config: s.config(), Messages: s.hist.All(), Todos: st.Todos, Title: st.Title,
		Usage: st.Usage, SubagentUsage: st.SubagentUsage})
}

// untold reports whether the session has changed something that is not
// stored and told yet (a write under way or wanted, events waiting), in
// which case it asks itself ctx's message again in toldRetry: a read
// that copies the history out (an export, a fork's start), like
// get_messages, shows nothing a crash could take back. Its caller waits
// its request timeout.
func (s *session) untold(ctx actor.Context) bool {
	if s.home.env.Store == nil || s.p.j.Told() {
		return false
	}
	home, msg, sender := s.home, ctx.Message(), ctx.Sender()
	time.AfterFunc(toldRetry, func() { home.root().RequestWithCustomSender(home.self, msg, sender) })
	return true
}

// toldRetry is how often a read that waits for a write looks again.
const toldRetry = 5 * time.Millisecond

// record writes a new session's record and, for an import (snap not nil),
// its history, title, usage and volatile state, as Create does: when the
// second write fails, the first is undone.
func record(ctx context.Context, st store.Store, id string, cfg spec.Session, snap *store.Snapshot) error {
	if err := st.Create(ctx, id, cfg.Stored(cfg.Model)); err != nil {
		return err
	}
	if snap == nil {
		return nil
	}
	vol := snap.Volatile
	err := st.Apply(ctx, id, &store.Batch{Messages: snap.Messages, HistoryStart: snap.HistoryStart, Title: snap.Title,
		Usage: snap.Usage, Volatile: &vol})
	if err != nil {
		_ = st.Delete(context.WithoutCancel(ctx), id)
	}
	return err
}

// Record stores a new session of configuration cfg (its Model stored as
// it is), that starts from snap (an import) when snap is not nil, without
// starting it: what a runtime whose sessions live elsewhere does, for the
// process that uses it first to restore. It fails with store.ErrExists
// when the id is taken.
func Record(ctx context.Context, st store.Store, id string, cfg spec.Session, snap *store.Snapshot) error {
	return record(ctx, st, id, cfg, snap)
}
