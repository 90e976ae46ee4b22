package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
)

// command is one entry of the protocol's command table.
type command struct {
	// name is the command's cmd; decodeCommand fills it in.
	name string
	// new makes the message the command's fields decode into.
	new func() proto.Message
	// required names fields the command must have.
	required []string
	// check, when set, validates the decoded message further.
	check func(proto.Message) error
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

// hasField reports whether the command's message has a field called name.
func (c command) hasField(name string) bool {
	return c.new().ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name)) != nil
}

// commands is the command table of docs/protocol.md.
var commands = map[string]command{
	"create_session": {new: func() proto.Message { return &eventsv1.CreateSession{} }, noSession: true, global: createSession},
	"list_sessions":  {new: func() proto.Message { return &eventsv1.ListSessions{} }, noSession: true, global: listSessions},
	"prompt":         {new: func() proto.Message { return &eventsv1.Prompt{} }, required: []string{"text"}, session: send},
	"steer":          {new: func() proto.Message { return &eventsv1.Steer{} }, required: []string{"text"}, session: send},
	"abort":          {new: func() proto.Message { return &eventsv1.Abort{} }, check: checkAbort, session: send},
	"approve":        {new: func() proto.Message { return &eventsv1.Approve{} }, required: []string{"approval_id"}, session: send},
	"reject":         {new: func() proto.Message { return &eventsv1.Reject{} }, required: []string{"approval_id"}, session: send},
	"respond":        {new: func() proto.Message { return &eventsv1.Respond{} }, required: []string{"ref", "response"}, session: send},
	"switch_model":   {new: func() proto.Message { return &eventsv1.SwitchModel{} }, required: []string{"model"}, session: switchModel},
	"get_state":      {new: func() proto.Message { return &eventsv1.GetState{} }, noSession: true, sessionRead: true, global: getState},
	"get_messages":   {new: func() proto.Message { return &eventsv1.GetMessages{} }, noSession: true, sessionRead: true, global: getMessages},
	"subscribe":      {new: func() proto.Message { return &eventsv1.Subscribe{} }, session: send},
	"close_session":  {new: func() proto.Message { return &eventsv1.CloseSession{} }, session: closeSession},
}

// decodeCommand decodes and checks the fields of the command called name:
// obj is its object without the line's cmd and id (and without session,
// but for create_session, whose own field it is). A name outside the table
// is unknown_command; a field that is missing, unknown, of the wrong type
// or out of range is bad_request with a message naming it.
func decodeCommand(name string, obj map[string]json.RawMessage) (command, proto.Message, error) {
	cmd, ok := commands[name]
	if !ok {
		return command{}, nil, &tack.Error{Code: events.CodeUnknownCommand, Message: fmt.Sprintf("unknown command %q", name)}
	}
	cmd.name = name
	msg := cmd.new()
	if err := events.UnmarshalJSONObject(obj, msg); err != nil {
		var uf *events.UnknownFieldError
		if errors.As(err, &uf) {
			err = uf.Within(name)
		}
		return command{}, nil, badRequest(err.Error())
	}
	for _, f := range cmd.required {
		if v, ok := obj[f]; !ok || string(v) == "null" {
			return command{}, nil, badRequest(fmt.Sprintf("%s needs %q", name, f))
		}
	}
	if cmd.check != nil {
		if err := cmd.check(msg); err != nil {
			return command{}, nil, err
		}
	}
	return cmd, msg, nil
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

// checkAbort checks abort's kill_tools.
func checkAbort(msg proto.Message) error {
	switch k := msg.(*eventsv1.Abort).KillTools; k {
	case "", "killable", "all", "none":
		return nil
	default:
		return badRequest(fmt.Sprintf("kill_tools is killable, all or none, not %q", k))
	}
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
