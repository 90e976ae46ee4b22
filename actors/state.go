package actors

import (
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors/journal"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

// state answers get_state.
func (s *session) state() *eventsv1.SessionState {
	spent := s.notes.usage()
	st := &eventsv1.SessionState{
		State:          string(s.machine.Current()),
		Model:          s.spec.Model.Name,
		PromptQueue:    append([]string{}, s.q.Prompts()...),
		SteeringQueue:  append([]*eventsv1.SteeringItem{}, s.q.Steering()...),
		MessageCount:   int32(s.hist.Len()),
		Usage:          spent.total.proto(),
		AbandonedTools: s.load.abandoned.Load(),
		Title:          s.notes.title,
		Todos:          s.notes.todos,
	}
	if spent.subRan {
		st.SubagentUsage = spent.sub.proto()
	}
	st.PendingApprovals, st.PendingQuestion = s.pending()
	window, percent := s.contextWindow(s.spec.Model)
	st.Context = &eventsv1.ContextInfo{Used: spent.context, Window: window, Percent: percent}
	if s.run != nil {
		st.RunId = &s.run.id
		if s.run.batch != nil {
			for _, c := range s.run.batch.calls {
				if c.running() {
					st.RunningTools = append(st.RunningTools, &eventsv1.RunningTool{CallId: c.tc.Id, Name: c.tc.Name, Immune: c.immune})
				}
			}
		}
	}
	return st
}

// summary is the session's list_sessions entry.
func (s *session) summary() *eventsv1.SessionSummary {
	return &eventsv1.SessionSummary{
		Session:      s.spec.ID,
		State:        string(s.machine.Current()),
		Model:        s.spec.Model.Name,
		MessageCount: int32(s.hist.Len()),
		Loaded:       true,
		Title:        s.notes.title,
		UpdatedAt:    eventjson.Timestamp(time.Unix(0, s.notes.updated)),
	}
}

// replay answers the protocol's subscribe: the buffered events after since
// that match the types (live events reach JSON-lines clients anyway).
func (s *session) replay(ctx actor.Context, m *eventsv1.Subscribe) {
	f, err := events.NewFilter(m.Types)
	if err != nil {
		s.fail(ctx, events.CodeBadRequest, err.Error())
		return
	}
	evs := s.out.log.Replay(m.Since, f)
	s.reply(ctx, &eventsv1.Reply{Data: &eventsv1.Reply_Events{Events: &eventsv1.EventList{Events: evs}}})
}

// notes is what the store keeps of a session besides its history and
// its queues.
type notes struct {
	// title is the session's title (the first line of its first prompt,
	// or what the model last wrote in <title>); updated is when the
	// session last changed (a commit, a state change or anything else the
	// store would keep), in Unix nanoseconds: a time.Time would take two
	// more words of an idle session's size class.
	title   string
	updated int64
	// todos is the todo list todo_write last wrote; detached names the
	// tools detach_tools took out that a restore would bring back.
	todos    []*eventsv1.Todo
	detached []string
	// ids counts the runs (r-N), steering refs (st-N), holds (ap-N, q-N)
	// and sub-agents (<id>/sub-N) so far: ids never repeat.
	ids store.Counters
	// spent is its usage (usage.go); nil until it has any, since an idle
	// session's size class has no room for it: read it with usage, add
	// to it with spending.
	spent *spent
}

// read answers the commands that read the session: get_state, a
// list_sessions entry, get_messages.
func (s *session) read(ctx actor.Context) bool {
	r := s.readReply(ctx.Message())
	if r == nil {
		return false
	}
	if ctx.Sender() != nil {
		s.deliverItem(ctx, journal.Item{To: ctx.Sender(), Reply: r, Read: ctx.Message()})
	}
	return true
}

// readReply is the answer to msg if it is a command that reads the
// session, else nil.
func (s *session) readReply(msg any) *eventsv1.Reply {
	switch m := msg.(type) {
	case *eventsv1.GetState:
		return &eventsv1.Reply{Data: &eventsv1.Reply_State{State: s.state()}}
	case *GetSummary:
		list := &eventsv1.SessionList{Sessions: []*eventsv1.SessionSummary{s.summary()}}
		return &eventsv1.Reply{Data: &eventsv1.Reply_Sessions{Sessions: list}}
	case *eventsv1.GetMessages:
		msgs := slices.Clone(s.hist.Messages())
		if m.All {
			msgs = s.hist.All()
		}
		return &eventsv1.Reply{Data: &eventsv1.Reply_Messages{Messages: &eventsv1.MessageList{Messages: msgs}}}
	}
	return nil
}
