package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// subscribeTry bounds one try at subscribing. A session being restored
// on a member that waits out a dead member's lease may answer later than
// that; the follower then tries again, which is safe: the session never
// sends one subscriber an event twice, however often it subscribes.
const subscribeTry = 5 * time.Second

// resubscribePause is the pause between two failed tries at subscribing
// again.
const resubscribePause = 250 * time.Millisecond

// Follow subscribes a new actor of c's actor system to session id's
// events after since (types filters them, as remotev1.Subscribe), and
// calls handle with each, in order, on that actor's goroutine. The actor
// watches the session's grain: when the grain goes — its member died, or
// the session moved to another member — it subscribes again through the
// cluster with the last seq it was sent, which brings the session back on
// the member that now hosts it; the gap in numbering then comes as
// events_lost. handle never gets an event twice nor one older than one it
// had — a late event of the member the session left is not handed on,
// and an events_lost names only numbers after the last event handle had.
// Follow returns once the first subscription is in place (or failed);
// stop the returned PID to unsubscribe.
func Follow(c *Cluster, id string, since uint64, types []string, handle func(*eventsv1.Event)) (*actor.PID, error) {
	return FollowFor(c, id, "", since, types, handle)
}

// FollowFor is Follow for user ("": anyone): the session refuses to be
// followed by a user it does not belong to (RequestFor).
func FollowFor(c *Cluster, id, user string, since uint64, types []string, handle func(*eventsv1.Event)) (*actor.PID, error) {
	first := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{c: c, id: id, user: user, last: since, types: types, handle: handle, first: first, ctx: ctx, cancel: cancel}
	pid := c.ActorSystem.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return f }))
	if err := <-first; err != nil {
		c.ActorSystem.Root.Stop(pid)
		return nil, err
	}
	return pid, nil
}

// follower is Follow's actor.
type follower struct {
	c      *Cluster
	id     string
	user   string
	types  []string
	handle func(*eventsv1.Event)
	first  chan error

	last    uint64
	watched *actor.PID
	// ctx ends the follower's tries at subscribing when it stops.
	ctx    context.Context
	cancel context.CancelFunc
}

// subscribed is the outcome of a try at subscribing.
type subscribed struct {
	grain *actor.PID
	err   error
}

// resubscribe asks the follower to try again.
type resubscribe struct{}

// Receive handles events, the grain's end and subscription outcomes.
func (f *follower) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started, *resubscribe:
		f.subscribe(ctx)
	case *actor.Stopping:
		f.cancel()
	case *subscribed:
		if f.first != nil {
			f.first <- m.err
			f.first = nil
			if m.err != nil {
				return // Follow stops the actor
			}
		}
		if m.err != nil {
			root, self := ctx.ActorSystem().Root, ctx.Self()
			t := time.AfterFunc(resubscribePause, func() { root.Send(self, &resubscribe{}) })
			context.AfterFunc(f.ctx, func() { t.Stop() })
			return
		}
		f.watched = m.grain
		ctx.Watch(m.grain)
	case *actor.Terminated:
		if f.watched != nil && m.Who.Equal(f.watched) && f.ctx.Err() == nil {
			f.c.PidCache.RemoveByValue(f.id, remotev1.SessionKind, f.watched)
			f.watched = nil
			f.subscribe(ctx)
		}
	case *eventsv1.Event:
		ev, last, ok := news(m, f.last)
		if ok {
			f.last = last
			f.handle(ev)
		}
	}
}

// news is what of ev is news to a follower that has had the events up to
// seq last: ev, or an events_lost trimmed to the numbers after last; ok is
// false when nothing is. last is what the follower has had after it. The
// session's old grain ends (Terminated) on a path of its own, so an event
// the session sent before it moved can come after the follower subscribed
// again with an older last, and the new member's events_lost then names
// numbers the follower already had; that late event itself, or one that
// comes after the new member's, is not news either.
func news(ev *eventsv1.Event, last uint64) (_ *eventsv1.Event, _ uint64, ok bool) {
	lost := ev.GetEventsLost()
	switch {
	case lost == nil && ev.Seq <= last, lost != nil && lost.To <= last:
		return nil, last, false
	case lost == nil:
		return ev, ev.Seq, true
	case lost.From <= last:
		// Events are shared (a local session's stream keeps them): trim a
		// copy.
		ev = proto.Clone(ev).(*eventsv1.Event)
		ev.GetEventsLost().From = last + 1
	}
	return ev, lost.To, true
}

// subscribe subscribes the follower with the last seq it saw, on a
// goroutine of its own (the session may have to be restored first); the
// outcome comes back as a subscribed message.
func (f *follower) subscribe(ctx actor.Context) {
	if f.ctx.Err() != nil {
		return
	}
	c, id, user, root, self := f.c, f.id, f.user, ctx.ActorSystem().Root, ctx.Self()
	msg := &remotev1.Subscribe{Subscriber: self, Since: f.last, Types: f.types}
	try, cancel := context.WithTimeout(f.ctx, subscribeTry)
	go func() {
		defer cancel()
		out := &subscribed{}
		if _, out.err = replyFor(try, c, id, user, msg); out.err == nil {
			if out.grain = Grain(c, id); out.grain == nil {
				out.err = fmt.Errorf("session %s: subscribed, but its grain is not found", id)
			}
		}
		root.Send(self, out)
	}()
}
