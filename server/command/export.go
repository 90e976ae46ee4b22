package command

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/spec"
)

// exportSession answers the session as one document.
func exportSession(ctx context.Context, _ Env, s *tack.Session, _ proto.Message) (proto.Message, error) {
	return s.Export(ctx)
}

// importSession makes a session of the caller from an exported document:
// the session the command names (the HTTP query's), else the document's
// id is not reused — a new one is generated. Use follows the new session
// as create_session's.
func importSession(ctx context.Context, env Env, id string, msg proto.Message) (proto.Message, error) {
	m := msg.(*eventsv1.ImportSession)
	if m.Session == "" {
		m.Session = id
	}
	cfg, h, err := Imported(m.Document, env.User)
	if err != nil {
		return nil, err
	}
	cfg.ID = m.Session
	s, err := env.Runtime.Import(ctx, cfg, h)
	if err != nil {
		return nil, err
	}
	return created(ctx, env, s)
}

// Imported reads an exported document into the configuration (for user,
// its id left empty) and history Runtime.Import takes. A document of
// another format, or whose config is not a create_session object, is
// bad_request naming what is wrong.
func Imported(doc *eventsv1.SessionExport, user string) (tack.SessionConfig, tack.History, error) {
	if doc.GetFormat() != tack.ExportFormat {
		return tack.SessionConfig{}, tack.History{}, badRequest(fmt.Sprintf("document.format is %q: this runtime reads %q", doc.GetFormat(), tack.ExportFormat))
	}
	obj, err := eventjson.ParseObject(doc.GetConfig().GetJson())
	if err != nil {
		return tack.SessionConfig{}, tack.History{}, badRequest("document.config is not a JSON object: " + err.Error())
	}
	if _, ok := obj["session"]; ok {
		return tack.SessionConfig{}, tack.History{}, badRequest(`document.config names no session: the import's own "session" does`)
	}
	// create_session's own decoding (not through table, which refers to this).
	create, err := command{new: func() proto.Message { return &eventsv1.CreateSession{} }}.decode("create_session", obj)
	if err != nil {
		var e *tack.Error
		if errors.As(err, &e) {
			err = badRequest("document.config: " + e.Message)
		}
		return tack.SessionConfig{}, tack.History{}, err
	}
	cfg := spec.FromCreate(create.(*eventsv1.CreateSession), user)
	return cfg, tack.History{Messages: doc.Messages, Todos: doc.Todos, Title: doc.Title, Usage: doc.Usage, SubagentUsage: doc.SubagentUsage}, nil
}
