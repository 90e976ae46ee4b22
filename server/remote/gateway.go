package remote

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/command"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// gateway is the node's well-known actor "tack".
type gateway struct{ node *Node }

// Receive answers CreateSession, ImportSession, ListSessions and Lookup,
// and takes a cluster member's Rejoin; anything else is bad_request.
// A cluster member imports nothing: a front end (tack serve --cluster)
// writes an import to the shared store, for the member that takes it up.
func (g *gateway) Receive(ctx actor.Context) {
	n, sender := g.node, ctx.Sender()
	switch m := ctx.Message().(type) {
	case *eventsv1.CreateSession:
		if n.cluster != nil {
			n.createThrough(sender, m)
			return
		}
		n.answer(sender, func(c context.Context) (proto.Message, error) {
			data, err := command.RunMessage(c, n.env(), "", m)
			if created, ok := data.(*eventsv1.Created); ok {
				n.route(created.Session)
			}
			return data, err
		})
	case *eventsv1.ImportSession:
		n.answer(sender, func(c context.Context) (proto.Message, error) {
			if n.cluster != nil {
				return nil, &tack.Error{Code: events.CodeBadRequest, Message: "a cluster member imports no session: import through a front end (tack serve --cluster) or tack import on the shared store"}
			}
			data, err := command.RunMessage(c, n.env(), "", m)
			if created, ok := data.(*eventsv1.Created); ok {
				n.route(created.Session)
			}
			return data, err
		})
	case *eventsv1.ListSessions:
		n.answer(sender, func(c context.Context) (proto.Message, error) {
			return command.RunMessage(c, n.env(), "", m)
		})
	case *remotev1.Lookup:
		go func() {
			ref := &remotev1.SessionRef{Session: m.Session}
			if n.cluster != nil {
				ref = n.lookupThrough(m.Session)
			} else if _, err := n.rt.Session(m.Session); err != nil {
				ref.Error = replyOf(nil, err).Error
			} else {
				ref.Pid = n.route(m.Session)
			}
			if sender != nil {
				n.sys.Root.Send(sender, ref)
			}
		}()
	case *remotev1.Rejoin:
		n.rejoin(m)
	case actor.SystemMessage, actor.AutoReceiveMessage:
	default:
		if sender != nil {
			ctx.Respond(&eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: events.CodeBadRequest, Message: fmt.Sprintf(
				"%s is not a gateway command (CreateSession, ImportSession, ListSessions, Lookup); session commands go to the session's PID", messageName(m))}})
		}
	}
}

// messageName names a message for an error: its protobuf name.
func messageName(m any) string {
	if pm, ok := m.(proto.Message); ok {
		return string(pm.ProtoReflect().Descriptor().FullName())
	}
	return fmt.Sprintf("%T", m)
}
