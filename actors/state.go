package actors

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// state answers get_state.
func (s *session) state() *eventsv1.SessionState {
	st := &eventsv1.SessionState{
		State:          string(s.machine.Current()),
		Model:          s.spec.Model.Name,
		PromptQueue:    append([]string{}, s.q.Prompts()...),
		SteeringQueue:  append([]*eventsv1.SteeringItem{}, s.q.Steering()...),
		MessageCount:   int32(s.hist.Len()),
		Usage:          s.spent.total.proto(),
		AbandonedTools: s.abandoned.Load(),
		Title:          s.title,
		Todos:          s.todos,
	}
	if s.spent.subRan {
		st.SubagentUsage = s.spent.sub.proto()
	}
	st.PendingApprovals, st.PendingQuestion = s.pending()
	window, percent := s.contextWindow(s.spec.Model)
	st.Context = &eventsv1.ContextInfo{Used: s.spent.context, Window: window, Percent: percent}
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
		Title:        s.title,
		UpdatedAt:    eventjson.Timestamp(s.updated),
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
	evs := s.log.Replay(m.Since, f)
	s.reply(ctx, &eventsv1.Reply{Data: &eventsv1.Reply_Events{Events: &eventsv1.EventList{Events: evs}}})
}

// subscribe attaches a sink: replay after since, then live events. A sink
// already attached (for an actor, the same PID) keeps its one subscription
// and takes the new filter, so it never gets live events twice.
func (s *session) subscribe(ctx actor.Context, sink events.Sink, since uint64, f events.Filter) {
	if i := slices.IndexFunc(s.sinks, func(c events.Sink) bool { return sameSink(c, sink) }); i >= 0 {
		if old, ok := s.sinks[i].(*pidSink); ok {
			old.filter = sink.(*pidSink).filter
		}
		sink = s.sinks[i]
	} else {
		s.sinks = append(s.sinks, sink)
	}
	s.log.Subscribe(sink, since, f)
	s.reply(ctx, &eventsv1.Reply{})
}

// unsubscribe detaches a sink and closes it if it is a channel or a
// sub-agent's link to its parent.
func (s *session) unsubscribe(sink events.Sink) {
	for i, c := range s.sinks {
		if sameSink(c, sink) {
			s.log.Unsubscribe(c)
			s.sinks = slices.Delete(s.sinks, i, i+1) // clears the tail: no closed sink stays reachable
			switch cl := c.(type) {
			case *events.Channel:
				cl.Close()
			case *childSink:
				cl.Close()
			}
			return
		}
	}
}

// pidSink delivers events to an actor.
type pidSink struct {
	root *actor.RootContext
	pid  *actor.PID
	// filter is the subscription's, kept for passivation to hand on.
	filter events.Filter
}

func (p *pidSink) Deliver(ev *eventsv1.Event) { p.root.Send(p.pid, ev) }

// sameSink compares sinks; PID sinks compare by PID.
func sameSink(a, b events.Sink) bool {
	pa, aok := a.(*pidSink)
	pb, bok := b.(*pidSink)
	if aok && bok {
		return pa.pid.Equal(pb.pid)
	}
	return a == b
}
