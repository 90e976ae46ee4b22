package remote

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/cluster"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/command"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// route is the Process behind a session's PID "tack/<id>": it hands what
// it is sent to the session by id, so the PID outlives the session's
// actor (passivation, restore).
type route struct {
	node *Node
	id   string
}

var _ actor.Process = (*route)(nil)

// SendUserMessage hands a message to the session (Node.dispatch).
func (r *route) SendUserMessage(_ *actor.PID, message any) {
	header, msg, sender := actor.UnwrapEnvelope(message)
	r.node.dispatch(r.id, msg, sender, userIn(header))
}

// userIn is the user a message's header names it sent for
// (tack.UserHeader), "" for none.
func userIn(h actor.ReadonlyMessageHeader) string {
	if h == nil {
		return ""
	}
	return h.Get(tack.UserHeader)
}

// dispatch hands msg, sent by sender (nil: no answer wanted) for user
// ("": anyone), to session id of this node's runtime: the session, or
// the runtime for the commands it runs, checks that it is user's. Subscribe and Unsubscribe become the
// session's in-process subscription messages; SwitchModel, Fork,
// ExportSession, CloseSession and DeleteSession run through the runtime;
// everything else goes to the session actor as it is, which answers what it does not know with
// bad_request. A session's route and, in a cluster, its grain both hand
// their messages over here.
func (n *Node) dispatch(id string, msg any, sender *actor.PID, user string) {
	switch m := msg.(type) {
	case *remotev1.Subscribe:
		if m.Subscriber == nil {
			n.refuse(sender, "Subscribe needs subscriber: the PID the events go to")
			return
		}
		f, err := events.NewFilter(m.Types)
		if err != nil {
			n.refuse(sender, err.Error())
			return
		}
		n.host.Subscribe(id, user, sender, m.Subscriber, m.Since, f)
	case *remotev1.Unsubscribe:
		if m.Subscriber == nil {
			n.refuse(sender, "Unsubscribe needs subscriber")
			return
		}
		n.host.Unsubscribe(id, sender, m.Subscriber)
	case *eventsv1.SwitchModel, *eventsv1.Fork, *eventsv1.ExportSession:
		if f, ok := m.(*eventsv1.Fork); ok && n.cluster != nil && f.NewSession == "" {
			f.NewSession = cluster.NewSessionID()
		}
		n.answer(sender, func(c context.Context) (proto.Message, error) {
			data, err := command.RunMessage(forUser(c, user), n.env(), id, m.(proto.Message))
			if created, ok := data.(*eventsv1.Created); ok {
				n.created(created.Session)
			}
			return data, err
		})
	case *eventsv1.CloseSession, *eventsv1.DeleteSession:
		n.answer(sender, func(c context.Context) (proto.Message, error) {
			data, err := command.RunMessage(forUser(c, user), n.env(), id, m.(proto.Message))
			if err == nil {
				n.unroute(id)
			}
			return data, err
		})
	default:
		if sender != nil || user != "" {
			env := &actor.MessageEnvelope{Sender: sender, Message: msg}
			if user != "" {
				env.SetHeader(tack.UserHeader, user)
			}
			msg = env
		}
		n.host.Deliver(id, msg)
	}
}

// forUser is c sending for user, when there is one (tack.ForUser).
func forUser(c context.Context, user string) context.Context {
	if user == "" {
		return c
	}
	return tack.ForUser(c, user)
}

// refuse answers a request with bad_request.
func (n *Node) refuse(sender *actor.PID, message string) {
	if sender != nil {
		n.sys.Root.Send(sender, &eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: events.CodeBadRequest, Message: message}})
	}
}

// SendSystemMessage ignores system messages: a route never stops while
// its node runs (a caller watching it hears of the node going away).
func (r *route) SendSystemMessage(*actor.PID, any) {}

// Stop does nothing: a route goes when its session is closed.
func (r *route) Stop(*actor.PID) {}
