package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/spec"
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
	// Closed, when set, is called once close_session has closed a session
	// or delete_session has deleted one.
	Closed func(id string)
}

// command is one entry of the protocol's command table.
type command struct {
	// new makes the message the command's object decodes into.
	new func() proto.Message
	// required names fields the object must have.
	required []string
	// check, when set, validates the decoded message further.
	check func(proto.Message) error
	// global runs commands about no loaded session; id is the command's
	// session, "" when it has none.
	global func(ctx context.Context, env Env, id string, msg proto.Message) (proto.Message, error)
	// session runs commands on a loaded (or restored) session.
	session func(ctx context.Context, env Env, s *tack.Session, msg proto.Message) (proto.Message, error)
}

// table is the command table of docs/protocol.md.
var table = map[string]command{
	"create_session": {new: func() proto.Message { return &eventsv1.CreateSession{} }, global: createSession},
	"list_sessions":  {new: func() proto.Message { return &eventsv1.ListSessions{} }, check: checkList, global: listSessions},
	"prompt":         {new: func() proto.Message { return &eventsv1.Prompt{} }, required: []string{"text"}, check: checkPrompt, session: send},
	"steer":          {new: func() proto.Message { return &eventsv1.Steer{} }, required: []string{"text"}, session: send},
	"abort":          {new: func() proto.Message { return &eventsv1.Abort{} }, check: checkAbort, session: send},
	"approve":        {new: func() proto.Message { return &eventsv1.Approve{} }, required: []string{"approval_id"}, session: send},
	"reject":         {new: func() proto.Message { return &eventsv1.Reject{} }, required: []string{"approval_id"}, session: send},
	"respond":        {new: func() proto.Message { return &eventsv1.Respond{} }, required: []string{"ref", "response"}, session: send},
	"switch_model":   {new: func() proto.Message { return &eventsv1.SwitchModel{} }, required: []string{"model"}, session: switchModel},
	"get_state":      {new: func() proto.Message { return &eventsv1.GetState{} }, session: send},
	"get_messages":   {new: func() proto.Message { return &eventsv1.GetMessages{} }, session: send},
	"subscribe":      {new: func() proto.Message { return &eventsv1.Subscribe{} }, session: send},
	"close_session":  {new: func() proto.Message { return &eventsv1.CloseSession{} }, session: closeSession},
	"delete_session": {new: func() proto.Message { return &eventsv1.DeleteSession{} }, global: deleteSession},
	"export_session": {new: func() proto.Message { return &eventsv1.ExportSession{} }, session: exportSession},
	"import_session": {new: func() proto.Message { return &eventsv1.ImportSession{} }, required: []string{"document"}, global: importSession},
	"compact":        {new: func() proto.Message { return &eventsv1.Compact{} }, session: send},
	"attach_tools":   {new: func() proto.Message { return &eventsv1.AttachTools{} }, required: []string{"names"}, check: checkNames, session: send},
	"detach_tools":   {new: func() proto.Message { return &eventsv1.DetachTools{} }, required: []string{"names"}, check: checkNames, session: send},
	"fork":           {new: func() proto.Message { return &eventsv1.Fork{} }, required: []string{"index"}, session: fork},
}

// byMessage finds a command of the table by its message's full name.
var byMessage = func() map[protoreflect.FullName]string {
	m := map[protoreflect.FullName]string{}
	for name, c := range table {
		m[c.new().ProtoReflect().Descriptor().FullName()] = name
	}
	return m
}()

// RunMessage runs a command given as its events/v1 message, as RunObject
// runs one given as JSON (other actor systems send messages): id names
// the session ("" for list_sessions; create_session takes the message's
// own). A message that is no command of the protocol is unknown_command.
func RunMessage(ctx context.Context, env Env, id string, msg proto.Message) (proto.Message, error) {
	name, ok := byMessage[msg.ProtoReflect().Descriptor().FullName()]
	if !ok {
		return nil, &tack.Error{Code: events.CodeUnknownCommand, Message: fmt.Sprintf("%s is not a command", msg.ProtoReflect().Descriptor().FullName())}
	}
	cmd := table[name]
	if cmd.check != nil {
		if err := cmd.check(msg); err != nil {
			return nil, err
		}
	}
	return run(ctx, env, cmd, name, id, msg)
}

// Known reports whether name is a command of the protocol.
func Known(name string) bool {
	_, ok := table[name]
	return ok
}

// Run is RunObject for a body that is the command's fields as JSON text:
// an object, or empty for none.
func Run(ctx context.Context, env Env, name, id string, body []byte) (proto.Message, error) {
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(body)) > 0 {
		var err error
		if obj, err = eventjson.ParseObject(body); err != nil {
			return nil, badRequest("the body is not a JSON object: " + err.Error())
		}
	}
	return RunObject(ctx, env, name, id, obj)
}

// RunObject checks and runs command name on session id; obj holds the
// command's fields (without the JSON-lines keys cmd, id and session). id
// is "" for commands about no session (list_sessions); create_session
// takes it as the new session's id when obj names none. A session command
// on a stored session restores it first, whatever the command.
//
// It returns the response's data, nil when the command answers nothing.
// Errors are *tack.Error with the protocol's code: unknown_command for an
// unknown name, bad_request naming the field for a field that is unknown
// (`unknown field "kill_tool" in abort`), missing, of the wrong type or
// out of range, and whatever the runtime or the session answers.
func RunObject(ctx context.Context, env Env, name, id string, obj map[string]json.RawMessage) (proto.Message, error) {
	msg, err := Decode(name, obj)
	if err != nil {
		return nil, err
	}
	return run(ctx, env, table[name], name, id, msg)
}

// run runs a decoded and checked command.
func run(ctx context.Context, env Env, cmd command, name, id string, msg proto.Message) (proto.Message, error) {
	if cmd.global != nil {
		return cmd.global(ctx, env, id, msg)
	}
	if id == "" {
		return nil, badRequest(fmt.Sprintf("%s needs %q", name, "session"))
	}
	s, err := env.Runtime.Session(id)
	if err != nil {
		return nil, err
	}
	ctx = forUser(ctx, env)
	if env.Use != nil {
		if err := env.Use(ctx, s); err != nil {
			return nil, err
		}
	}
	return cmd.session(ctx, env, s, msg)
}

// Decode reads obj, the fields of command name, into the command's
// message and checks them as RunObject does, without running anything.
func Decode(name string, obj map[string]json.RawMessage) (proto.Message, error) {
	cmd, ok := table[name]
	if !ok {
		return nil, &tack.Error{Code: events.CodeUnknownCommand, Message: fmt.Sprintf("unknown command %q", name)}
	}
	return cmd.decode(name, obj)
}

// decode reads obj into the command's message and checks it: every key
// must be a field, at any depth, the required ones present, and the
// values in range.
func (c command) decode(name string, obj map[string]json.RawMessage) (proto.Message, error) {
	msg := c.new()
	if err := eventjson.UnmarshalObject(obj, msg); err != nil {
		var uf *eventjson.UnknownFieldError
		if errors.As(err, &uf) {
			err = uf.Within(name)
		}
		return nil, badRequest(err.Error())
	}
	for _, f := range c.required {
		if v, ok := obj[f]; !ok || string(v) == "null" {
			return nil, badRequest(fmt.Sprintf("%s needs %q", name, f))
		}
	}
	if c.check != nil {
		if err := c.check(msg); err != nil {
			return nil, err
		}
	}
	return msg, nil
}

// send passes the command to the session and answers with its reply data.
func send(ctx context.Context, _ Env, s *tack.Session, msg proto.Message) (proto.Message, error) {
	r, err := s.Send(delivering(ctx), msg)
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
	case *eventsv1.Reply_Export:
		return d.Export
	}
	return nil
}

// checkAbort checks abort's kill_tools, at and timeout_ms.
func checkAbort(msg proto.Message) error {
	if err := events.CheckAbort(msg.(*eventsv1.Abort)); err != nil {
		return badRequest(err.Error())
	}
	return nil
}

// checkPrompt checks prompt's if_busy.
func checkPrompt(msg proto.Message) error {
	if err := events.CheckPrompt(msg.(*eventsv1.Prompt)); err != nil {
		return badRequest(err.Error())
	}
	return nil
}

// fork makes the new session and answers with its id; Use follows it as
// create_session's.
func fork(ctx context.Context, env Env, s *tack.Session, msg proto.Message) (proto.Message, error) {
	m := msg.(*eventsv1.Fork)
	f, err := s.Fork(ctx, int(m.Index), m.NewSession)
	if err != nil {
		return nil, err
	}
	return created(ctx, env, f)
}

// created follows a session a command made (Use, which closes it on
// refusal) and answers its id.
func created(ctx context.Context, env Env, s *tack.Session) (proto.Message, error) {
	if env.Use != nil {
		if err := env.Use(ctx, s); err != nil {
			s.Close()
			return nil, err
		}
	}
	return &eventsv1.Created{Session: s.ID()}, nil
}

// checkNames checks that attach_tools and detach_tools name a tool.
func checkNames(msg proto.Message) error {
	names, cmd := msg.(interface{ GetNames() []string }).GetNames(), "attach_tools"
	if _, detach := msg.(*eventsv1.DetachTools); detach {
		cmd = "detach_tools"
	}
	if len(names) == 0 {
		return badRequest(cmd + ` needs at least one name in "names"`)
	}
	return nil
}

// checkList checks list_sessions' limit.
func checkList(msg proto.Message) error {
	if l := msg.(*eventsv1.ListSessions).Limit; l < 0 {
		return badRequest(fmt.Sprintf("limit must not be negative, not %d", l))
	}
	return nil
}

func switchModel(ctx context.Context, _ Env, s *tack.Session, msg proto.Message) (proto.Message, error) {
	return nil, s.SwitchModel(ctx, msg.(*eventsv1.SwitchModel).Model)
}

func createSession(ctx context.Context, env Env, id string, msg proto.Message) (proto.Message, error) {
	m := msg.(*eventsv1.CreateSession)
	if m.Session == "" {
		m.Session = id
	}
	s, err := env.Runtime.Spawn(spec.FromCreate(m, env.User))
	if err != nil {
		return nil, err
	}
	return created(ctx, env, s)
}

func closeSession(ctx context.Context, env Env, s *tack.Session, _ proto.Message) (proto.Message, error) {
	if err := s.CloseContext(ctx); err != nil {
		return nil, err
	}
	if env.Closed != nil {
		env.Closed(s.ID())
	}
	return nil, nil
}

// deleteSession deletes the session without restoring it first; a user
// deletes only their own sessions (another's is invalid_session, as one
// that does not exist).
func deleteSession(ctx context.Context, env Env, id string, _ proto.Message) (proto.Message, error) {
	if err := owned(ctx, env, "delete_session", id); err != nil {
		return nil, err
	}
	if err := env.Runtime.Delete(forUser(ctx, env), id); err != nil {
		return nil, err
	}
	if env.Closed != nil {
		env.Closed(id)
	}
	return nil, nil
}

// forUser is ctx sending for env.User, when env has one: the session
// (and a delete) checks its owner too, as it takes the command, for the
// id may change hands after owned or Use checked it.
func forUser(ctx context.Context, env Env) context.Context {
	if env.User == "" {
		return ctx
	}
	return tack.ForUser(ctx, env.User)
}

// owned checks that command name names a session, and one of env.User's
// when env has a user: a global command about a session answers
// invalid_session for another user's, as for one that does not exist.
func owned(ctx context.Context, env Env, name, id string) error {
	if id == "" {
		return badRequest(fmt.Sprintf("%s needs %q", name, "session"))
	}
	if env.User == "" {
		return nil
	}
	owner, err := env.Runtime.User(ctx, id)
	if err != nil {
		return err
	}
	if owner != env.User {
		return &tack.Error{Code: events.CodeInvalidSession, Message: fmt.Sprintf("no session %q", id)}
	}
	return nil
}

func listSessions(ctx context.Context, env Env, _ string, msg proto.Message) (proto.Message, error) {
	m := msg.(*eventsv1.ListSessions)
	return env.Runtime.List(ctx, tack.ListOptions{Limit: int(m.Limit), Cursor: m.Cursor, User: env.User})
}

// getState and getMessages read a stored session without loading it.
func badRequest(msg string) error {
	return &tack.Error{Code: events.CodeBadRequest, Message: msg}
}
