package rpc

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
)

// command is one entry of the protocol's command table.
type command struct {
	// new makes the message the line decodes into; nil for commands with
	// no fields.
	new func() proto.Message
	// required names fields the line must have.
	required []string
	// noSession marks commands that run global instead of session.
	noSession bool
	// sessionRead marks global commands that still need a session id: reads
	// served from the store without loading the session.
	sessionRead bool
	// global runs commands that need no loaded session; id is the line's
	// session, "" when absent.
	global  func(ctx context.Context, c *conn, id string, msg proto.Message) (proto.Message, error)
	session func(ctx context.Context, c *conn, s *tack.Session, msg proto.Message) (proto.Message, error)
}

// needsSession reports whether the command's line must name a session.
func (c command) needsSession() bool { return !c.noSession || c.sessionRead }

// commands is the command table of docs/protocol.md.
var commands = map[string]command{
	"create_session": {new: func() proto.Message { return &eventsv1.CreateSession{} }, noSession: true, global: createSession},
	"list_sessions":  {new: func() proto.Message { return &eventsv1.ListSessions{} }, noSession: true, global: listSessions},
	"prompt":         {new: func() proto.Message { return &eventsv1.Prompt{} }, required: []string{"text"}, session: send},
	"steer":          {new: func() proto.Message { return &eventsv1.Steer{} }, required: []string{"text"}, session: send},
	"abort":          {new: func() proto.Message { return &eventsv1.Abort{} }, session: abort},
	"approve":        {new: func() proto.Message { return &eventsv1.Approve{} }, required: []string{"approval_id"}, session: send},
	"reject":         {new: func() proto.Message { return &eventsv1.Reject{} }, required: []string{"approval_id"}, session: send},
	"respond":        {new: func() proto.Message { return &eventsv1.Respond{} }, required: []string{"ref", "response"}, session: send},
	"switch_model":   {new: func() proto.Message { return &eventsv1.SwitchModel{} }, required: []string{"model"}, session: switchModel},
	"get_state":      {new: func() proto.Message { return &eventsv1.GetState{} }, noSession: true, sessionRead: true, global: getState},
	"get_messages":   {new: func() proto.Message { return &eventsv1.GetMessages{} }, noSession: true, sessionRead: true, global: getMessages},
	"subscribe":      {new: func() proto.Message { return &eventsv1.Subscribe{} }, session: send},
	"close_session":  {session: closeSession},
}

// send passes the command to the session and answers with its reply data.
func send(ctx context.Context, _ *conn, s *tack.Session, msg proto.Message) (proto.Message, error) {
	r, err := s.Send(ctx, msg)
	if err != nil {
		return nil, err
	}
	return replyData(r), nil
}

// replyData is the message a reply carries, or nil.
func replyData(r *eventsv1.Reply) proto.Message {
	switch d := r.GetData().(type) {
	case *eventsv1.Reply_Created:
		return d.Created
	case *eventsv1.Reply_Prompt:
		return d.Prompt
	case *eventsv1.Reply_Steer:
		return d.Steer
	case *eventsv1.Reply_State:
		return d.State
	case *eventsv1.Reply_Messages:
		return d.Messages
	case *eventsv1.Reply_Events:
		return d.Events
	case *eventsv1.Reply_Sessions:
		return d.Sessions
	}
	return nil
}

func abort(ctx context.Context, c *conn, s *tack.Session, msg proto.Message) (proto.Message, error) {
	switch k := msg.(*eventsv1.Abort).KillTools; k {
	case "", "killable", "all", "none":
	default:
		return nil, badRequest(fmt.Sprintf("kill_tools is killable, all or none, not %q", k))
	}
	return send(ctx, c, s, msg)
}

func switchModel(ctx context.Context, _ *conn, s *tack.Session, msg proto.Message) (proto.Message, error) {
	return nil, s.SwitchModel(ctx, msg.(*eventsv1.SwitchModel).Model)
}

func createSession(ctx context.Context, c *conn, _ string, msg proto.Message) (proto.Message, error) {
	m := msg.(*eventsv1.CreateSession)
	var ps []plugins.Config
	for _, p := range m.Plugins {
		ps = append(ps, plugins.Config{Name: p.Name, Config: json.RawMessage(p.GetConfig().GetJson())})
	}
	s, err := c.rt.Spawn(tack.SessionConfig{
		ID: m.Session, Model: m.Model, Script: json.RawMessage(m.GetScript().GetJson()),
		System: m.System, Tools: m.Tools, Plugins: ps,
	})
	if err != nil {
		return nil, err
	}
	if err := c.follow(ctx, s); err != nil {
		s.Close()
		return nil, err
	}
	return &eventsv1.Created{Session: s.ID()}, nil
}

func closeSession(_ context.Context, c *conn, s *tack.Session, _ proto.Message) (proto.Message, error) {
	s.Close()
	c.forget(s.ID())
	return nil, nil
}

func listSessions(ctx context.Context, c *conn, _ string, msg proto.Message) (proto.Message, error) {
	m := msg.(*eventsv1.ListSessions)
	return c.rt.List(ctx, int(m.Limit), m.Cursor)
}

// getState and getMessages read a stored session without loading it.
func getState(ctx context.Context, c *conn, id string, _ proto.Message) (proto.Message, error) {
	return c.rt.State(ctx, id)
}

func getMessages(ctx context.Context, c *conn, id string, _ proto.Message) (proto.Message, error) {
	msgs, err := c.rt.Messages(ctx, id)
	if err != nil {
		return nil, err
	}
	return &eventsv1.MessageList{Messages: msgs}, nil
}
