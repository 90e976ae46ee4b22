package actors

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// outlet is where a session's events go: its stream (numbered, with the
// ring a subscriber replays from), the sinks subscribed to it, and the
// tracer that watches it. Events reach it only through the write gate
// (publish), once the store holds what they tell.
type outlet struct {
	log   *events.Stream
	sinks []events.Sink
	// trace watches the session for tracing; nil when the Env has no
	// Tracer or the session is a sub-agent.
	trace SessionTracer
	// moment is the clock's reading for the message being handled, 0
	// until something asks for it (stamp). Receive clears it.
	moment int64
}

// stamp is the time of the message being handled. The clock is read once
// per message: the events the message tells and the activity it records
// all carry that time (a reading per event cost a scripted turn 5 % of
// its CPU: docs/benchmarks.md, finding 21).
func (s *session) stamp() int64 {
	if s.out.moment == 0 {
		s.out.moment = s.home.env.now().UnixNano()
	}
	return s.out.moment
}

// toStream publishes ev, stamped with the message's time, to the stream.
func (s *session) toStream(ev *eventsv1.Event) {
	ev.TsUnixNano = s.stamp()
	s.out.log.Publish(ev)
}

func newOutlet(env *Env, spec Spec) outlet {
	trace := sessionTracer(env, spec)
	return outlet{log: newStream(env, spec, trace), trace: trace}
}

// newStream is a session's event stream; a restored one numbers its events
// past anything a client may have seen before the restart (a parked one
// goes on from its last, a session not started yet starts from 1 as a new
// session does).
func newStream(env *Env, spec Spec, trace SessionTracer) *events.Stream {
	opts := []events.StreamOption{events.WithRingSize(env.ringSize()), events.WithClock(env.now)}
	if trace != nil {
		opts = append(opts, events.WithTap(trace))
	}
	switch {
	case spec.Unparked:
		opts = append(opts, events.WithLastSeq(spec.Restore.EventSeq))
	case spec.Restore != nil && !spec.Restore.Volatile.Unstarted: // one not started yet starts from 1
		opts = append(opts, events.WithLastSeq(spec.Restore.EventSeq+seqGap))
	}
	return events.NewStream(spec.ID, opts...)
}

// sessionTracer is what traces the session of spec: nil without a
// Tracer, and for a sub-agent, which its parent traces.
func sessionTracer(env *Env, spec Spec) SessionTracer {
	if env.Tracer == nil || spec.Stored.Subagents != nil && spec.Stored.Subagents.Depth > 0 {
		return nil
	}
	return env.Tracer.Session(spec.ID)
}

// attach subscribes a sink: replay after since, then live events. A sink
// already attached (for an actor, the same PID) keeps its one subscription
// and takes the new filter, so it never gets live events twice.
func (o *outlet) attach(sink events.Sink, since uint64, f events.Filter) {
	if i := slices.IndexFunc(o.sinks, func(c events.Sink) bool { return sameSink(c, sink) }); i >= 0 {
		if old, ok := o.sinks[i].(*pidSink); ok {
			old.filter = sink.(*pidSink).filter
		}
		sink = o.sinks[i]
	} else {
		o.sinks = append(o.sinks, sink)
	}
	o.log.Subscribe(sink, since, f)
}

// since is where a subscription that asks for since starts: with
// buffered, at the oldest event still buffered.
func (o *outlet) since(since uint64, buffered bool) uint64 {
	if buffered {
		return o.log.LastSeq() - uint64(o.log.Len())
	}
	return since
}

// read joins a reader to the session's feed, which its first reader
// makes: one sink, however many read it. The feed wakes its readers when
// the session's mailbox batch ends (wake), not on every event.
func (o *outlet) read(m *ReadFeed) {
	f := o.feed()
	if f == nil {
		f = events.NewFeed(o.log.Session(), m.Buffer)
		f.DeferWakes()
		o.attach(f, o.log.LastSeq(), events.Filter{})
	}
	f.Grow(m.Buffer)
	f.Join(m.Reader, o.log.Replay(o.since(m.Since, m.Buffered), m.Reader.Filter()), o.log.LastSeq()+1)
}

// leave detaches a reader from the feed, and the feed once no reader is
// left.
func (o *outlet) leave(r *events.FeedReader) {
	if f := o.feed(); f != nil && f.Leave(r) {
		o.detach(f)
	}
}

// wake wakes the feed's readers waiting for what the session published.
func (o *outlet) wake() {
	if f := o.feed(); f != nil {
		f.Flush()
	}
}

// feed is the session's feed, nil while it has no reader.
func (o *outlet) feed() *events.Feed {
	for _, k := range o.sinks {
		if f, ok := k.(*events.Feed); ok {
			return f
		}
	}
	return nil
}

// detach unsubscribes a sink and closes it if it is a channel, a feed or
// a sub-agent's link to its parent.
func (o *outlet) detach(sink events.Sink) {
	for i, c := range o.sinks {
		if sameSink(c, sink) {
			o.log.Unsubscribe(c)
			o.sinks = slices.Delete(o.sinks, i, i+1) // clears the tail: no closed sink stays reachable
			switch cl := c.(type) {
			case *events.Channel:
				cl.Close()
			case *events.Feed:
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

// subscription handles subscribing and unsubscribing, and a watched
// subscriber that stopped.
func (s *session) subscription(ctx actor.Context) bool {
	switch m := ctx.Message().(type) {
	case *eventsv1.Subscribe:
		s.replay(ctx, m)
	case *SubscribeSink:
		s.out.attach(m.Sink, s.out.since(m.Since, m.Buffered), m.Filter)
		s.reply(ctx, &eventsv1.Reply{})
	case *ReadFeed:
		s.out.read(m)
		s.reply(ctx, &eventsv1.Reply{})
	case *LeaveFeed:
		s.out.leave(m.Reader)
		if ctx.Sender() != nil {
			ctx.Respond(&eventsv1.Reply{}) // shows nothing, so it waits for no write
		}
	case *SubscribePID:
		ctx.Watch(m.PID)
		s.out.attach(&pidSink{root: s.home.root(), pid: m.PID, filter: m.Filter}, m.Since, m.Filter)
		s.reply(ctx, &eventsv1.Reply{})
	case *Unsubscribe:
		s.out.detach(m.Sink)
		if ctx.Sender() != nil {
			ctx.Respond(&eventsv1.Reply{}) // shows nothing, so it waits for no write
		}
	case *UnsubscribePID:
		ctx.Unwatch(m.PID)
		s.out.detach(&pidSink{pid: m.PID})
		s.reply(ctx, &eventsv1.Reply{})
	case *actor.Terminated:
		// A watched subscriber stopped, or its node went away.
		s.home.env.logger().Debug("dropped a subscriber", zap.String("session", s.spec.ID), zap.Stringer("subscriber", m.Who), zap.Stringer("why", m.Why))
		s.out.detach(&pidSink{pid: m.Who})
	default:
		return false
	}
	return true
}
