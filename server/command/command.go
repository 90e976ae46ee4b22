package command

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
)

// Env is what a command runs with.
type Env struct {
	// Runtime runs the sessions.
	Runtime *tack.Runtime
	// User is the caller: create_session makes sessions that belong to it
	// and list_sessions lists only its sessions. Empty means nobody in
	// particular, and list_sessions then lists every session.
	User string
	// Use, when set, is called with the session a command is about to run
	// on (and with each session create_session makes); an error stops the
	// command with that error. tack rpc follows the session's events here.
	Use func(ctx context.Context, s *tack.Session) error
	// Closed, when set, is called once close_session has closed a session.
	Closed func(id string)
}

// command is one entry of the protocol's command table.
type command struct {
	// new makes the message the command's object decodes into; nil for
	// commands with no fields.
	new func() proto.Message
	// required names fields the object must have.
	required []string
	// global runs commands that need no loaded session; id is the command's
	// session, "" when it has none.
	global func(ctx context.Context, env Env, id string, msg proto.Message) (proto.Message, error)
	// session runs commands on a loaded (or restored) session.
	session func(ctx context.Context, env Env, s *tack.Session, msg proto.Message) (proto.Message, error)
	// needsID marks global commands that still name a session: reads
	// served from the store without loading the session.
	needsID bool
	// pending marks commands of the protocol this runtime does not
	// implement yet: they answer bad_request.
	pending bool
}

// table is PROTOCOL.md §1's command table.
var table = map[string]command{
	"create_session": {new: func() proto.Message { return &eventsv1.CreateSession{} }, global: createSession},
	"list_sessions":  {new: func() proto.Message { return &eventsv1.ListSessions{} }, global: listSessions},
	"prompt":         {new: func() proto.Message { return &eventsv1.Prompt{} }, required: []string{"text"}, session: send},
	"steer":          {new: func() proto.Message { return &eventsv1.Steer{} }, required: []string{"text"}, session: send},
	"abort":          {new: func() proto.Message { return &eventsv1.Abort{} }, session: abort},
	"approve":        {new: func() proto.Message { return &eventsv1.Approve{} }, required: []string{"approval_id"}, session: send},
	"reject":         {new: func() proto.Message { return &eventsv1.Reject{} }, required: []string{"approval_id"}, session: send},
	"respond":        {new: func() proto.Message { return &eventsv1.Respond{} }, required: []string{"ref", "response"}, session: send},
	"switch_model":   {new: func() proto.Message { return &eventsv1.SwitchModel{} }, required: []string{"model"}, session: switchModel},
	"get_state":      {new: func() proto.Message { return &eventsv1.GetState{} }, needsID: true, global: getState},
	"get_messages":   {new: func() proto.Message { return &eventsv1.GetMessages{} }, needsID: true, global: getMessages},
	"subscribe":      {new: func() proto.Message { return &eventsv1.Subscribe{} }, session: send},
	"close_session":  {session: closeSession},
	"compact":        {pending: true},
	"attach_tools":   {pending: true},
	"detach_tools":   {pending: true},
	"fork":           {pending: true},
}

// Known reports whether name is a command of the protocol.
func Known(name string) bool {
	_, ok := table[name]
	return ok
}

// Run decodes body, the command's fields as a JSON object (without the
// JSON-lines keys cmd, id and session; empty when it has none), checks it
// and runs command name on session id. id is "" for commands about no
// session (list_sessions); create_session takes it as the new session's id
// when the body names none.
//
// It returns the response's data, nil when the command answers nothing.
// Errors are *tack.Error with the protocol's code: unknown_command for an
// unknown name, bad_request naming the field for a malformed body, an
// unknown or missing field or a value out of range, and whatever the
// runtime or the session answers.
func Run(ctx context.Context, env Env, name, id string, body []byte) (proto.Message, error) {
	cmd, ok := table[name]
	if !ok {
		return nil, &tack.Error{Code: events.CodeUnknownCommand, Message: fmt.Sprintf("unknown command %q", name)}
	}
	msg, err := cmd.decode(name, body)
	if err != nil {
		return nil, err
	}
	if id == "" && (cmd.session != nil || cmd.needsID || cmd.pending) {
		return nil, badRequest(fmt.Sprintf("%s needs %q", name, "session"))
	}
	switch {
	case cmd.pending:
		return nil, badRequest(name + " is not implemented yet")
	case cmd.global != nil:
		return cmd.global(ctx, env, id, msg)
	}
	s, err := env.Runtime.Session(id)
	if err != nil {
		return nil, err
	}
	if env.Use != nil {
		if err := env.Use(ctx, s); err != nil {
			return nil, err
		}
	}
	return cmd.session(ctx, env, s, msg)
}

// decode reads body into the command's message and checks its fields:
// each must be a field of the message, and the required ones present.
func (c command) decode(name string, body []byte) (proto.Message, error) {
	var fields map[string]json.RawMessage
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &fields); err != nil {
			return nil, badRequest("the body is not a JSON object: " + err.Error())
		}
	}
	var msg proto.Message
	var known protoreflect.FieldDescriptors
	if c.new != nil {
		msg = c.new()
		known = msg.ProtoReflect().Descriptor().Fields()
	}
	for _, k := range sortedKeys(fields) {
		if known == nil || known.ByName(protoreflect.Name(k)) == nil {
			return nil, badRequest(fmt.Sprintf("%s has no field %q", name, k))
		}
	}
	if msg != nil && len(fields) > 0 {
		if err := events.UnmarshalJSON(body, msg); err != nil {
			return nil, badRequest(err.Error())
		}
	}
	for _, f := range c.required {
		if v, ok := fields[f]; !ok || string(v) == "null" {
			return nil, badRequest(fmt.Sprintf("%s needs %q", name, f))
		}
	}
	return msg, nil
}

// sortedKeys returns m's keys in order, so that the first unknown field
// reported is the same every time.
func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// send passes the command to the session and answers with its reply data.
func send(ctx context.Context, _ Env, s *tack.Session, msg proto.Message) (proto.Message, error) {
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

func abort(ctx context.Context, env Env, s *tack.Session, msg proto.Message) (proto.Message, error) {
	switch k := msg.(*eventsv1.Abort).KillTools; k {
	case "", "killable", "all", "none":
	default:
		return nil, badRequest(fmt.Sprintf("kill_tools is killable, all or none, not %q", k))
	}
	return send(ctx, env, s, msg)
}

func switchModel(ctx context.Context, _ Env, s *tack.Session, msg proto.Message) (proto.Message, error) {
	return nil, s.SwitchModel(ctx, msg.(*eventsv1.SwitchModel).Model)
}

func createSession(ctx context.Context, env Env, id string, msg proto.Message) (proto.Message, error) {
	m := msg.(*eventsv1.CreateSession)
	if m.Session == "" {
		m.Session = id
	}
	var ps []plugins.Config
	for _, p := range m.Plugins {
		ps = append(ps, plugins.Config{Name: p.Name, Config: json.RawMessage(p.GetConfig().GetJson())})
	}
	s, err := env.Runtime.Spawn(tack.SessionConfig{
		ID: m.Session, Model: m.Model, Script: json.RawMessage(m.GetScript().GetJson()),
		System: m.System, Tools: m.Tools, Plugins: ps, User: env.User,
	})
	if err != nil {
		return nil, err
	}
	if env.Use != nil {
		if err := env.Use(ctx, s); err != nil {
			s.Close()
			return nil, err
		}
	}
	return &eventsv1.Created{Session: s.ID()}, nil
}

func closeSession(_ context.Context, env Env, s *tack.Session, _ proto.Message) (proto.Message, error) {
	s.Close()
	if env.Closed != nil {
		env.Closed(s.ID())
	}
	return nil, nil
}

func listSessions(ctx context.Context, env Env, _ string, msg proto.Message) (proto.Message, error) {
	m := msg.(*eventsv1.ListSessions)
	if m.Limit < 0 {
		return nil, badRequest(fmt.Sprintf("limit must not be negative, not %d", m.Limit))
	}
	return env.Runtime.List(ctx, tack.ListOptions{Limit: int(m.Limit), Cursor: m.Cursor, User: env.User})
}

// getState and getMessages read a stored session without loading it.
func getState(ctx context.Context, env Env, id string, _ proto.Message) (proto.Message, error) {
	return env.Runtime.State(ctx, id)
}

func getMessages(ctx context.Context, env Env, id string, _ proto.Message) (proto.Message, error) {
	msgs, err := env.Runtime.Messages(ctx, id)
	if err != nil {
		return nil, err
	}
	return &eventsv1.MessageList{Messages: msgs}, nil
}

func badRequest(msg string) error {
	return &tack.Error{Code: events.CodeBadRequest, Message: msg}
}
