package http

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	"github.com/tack-run/tack/server/command"
)

// userKey is the context key of the request's user.
type userKey struct{}

// withUser names the request's user, and tells the request log line
// (logRequests) too.
func withUser(r *http.Request, user string) *http.Request {
	if l, ok := r.Context().Value(requestLogKey{}).(*requestLog); ok {
		l.user = user
	}
	// Every command the request sends goes for user: the session checks
	// its owner as it takes it, as owns did before (the id may change
	// hands in between).
	return r.WithContext(tack.ForUser(context.WithValue(r.Context(), userKey{}, user), user))
}

// userOf is the user authenticate found, "" before it ran.
func userOf(r *http.Request) string { return userFrom(r.Context()) }

// userFrom is the user of the request whose context ctx is (or derives
// from), "" before authenticate ran.
func userFrom(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

// bodyKind says whether a route takes a JSON body.
type bodyKind bool

const (
	noBody   bodyKind = false
	jsonBody bodyKind = true
)

// global serves a command about no existing session from the JSON body.
func (s *Server) global(name string, status int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.noQuery(w, r) {
			return
		}
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		s.run(w, r, name, "", body, status)
	})
}

// list serves list_sessions from the query's limit and cursor.
func (s *Server) list() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields := map[string]any{}
		for k, vs := range r.URL.Query() {
			switch k {
			case "access_token":
			case "limit":
				n, err := strconv.ParseInt(vs[0], 10, 32)
				if err != nil {
					writeError(w, protoError(events.CodeBadRequest, fmt.Sprintf("limit must be an integer, not %q", vs[0])))
					return
				}
				fields["limit"] = n
			case "cursor":
				fields["cursor"] = vs[0]
			default:
				writeError(w, protoError(events.CodeBadRequest, fmt.Sprintf("list_sessions has no parameter %q", k)))
				return
			}
		}
		body, _ := json.Marshal(fields)
		s.run(w, r, "list_sessions", "", body, http.StatusOK)
	})
}

// importSession serves import_session: the body is the exported
// document, the query's session (optional) the new session's id.
func (s *Server) importSession() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := ""
		for k, vs := range r.URL.Query() {
			switch k {
			case "access_token":
			case "session":
				id = vs[0]
			default:
				writeError(w, protoError(events.CodeBadRequest, fmt.Sprintf("%s %s takes no parameter %q", r.Method, r.URL.Path, k)))
				return
			}
		}
		doc, ok := readBody(w, r)
		if !ok {
			return
		}
		if !json.Valid(doc) {
			writeError(w, protoError(events.CodeBadRequest, "the body is not a JSON document: send what GET /v1/sessions/{id}/export gave"))
			return
		}
		body, _ := json.Marshal(map[string]json.RawMessage{"document": doc}) // valid JSON: cannot fail
		s.run(w, r, "import_session", id, body, http.StatusCreated)
	})
}

// session serves a command about the session in the path, for its owner.
func (s *Server) session(name string, status int, kind bodyKind) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		var ok bool
		if kind == jsonBody {
			if !s.noQuery(w, r) {
				return
			}
			if body, ok = readBody(w, r); !ok {
				return
			}
		} else if body, ok = queryFlags(w, r, name); !ok {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.opts.requestTimeout)
		defer cancel()
		id := r.PathValue("id")
		if err := s.owns(ctx, r, id); err != nil {
			writeError(w, err)
			return
		}
		s.run(w, r.WithContext(ctx), name, id, body, status)
	})
}

// owns answers nil when the request's user owns session id, and
// invalid_session — the same error as for a session that does not exist
// — when the session is someone else's. It reads the session's record
// only: the session is not restored to find out.
func (s *Server) owns(ctx context.Context, r *http.Request, id string) error {
	owner, err := s.rt.User(ctx, id)
	if err != nil {
		return err
	}
	if owner != userOf(r) {
		return protoError(events.CodeInvalidSession, fmt.Sprintf("no session %q", id))
	}
	return nil
}

// run executes a command and answers with its data (or its error).
func (s *Server) run(w http.ResponseWriter, r *http.Request, name, id string, body []byte, status int) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.requestTimeout)
	defer cancel()
	data, err := command.Run(ctx, command.Env{Runtime: s.rt, User: userOf(r)}, name, id, body)
	session, approval := auditedFields(name, body)
	if id != "" {
		session = id
	}
	s.auditCommand(ctx, name, session, approval, data, err)
	if err != nil {
		writeError(w, err)
		return
	}
	writeData(w, status, data)
}

// writeData answers with a command's data as JSON ({} when it has none),
// or with no body for 204.
func writeData(w http.ResponseWriter, status int, data proto.Message) {
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	b := []byte("{}")
	if data != nil {
		var err error
		if b, err = eventjson.AppendMessage(nil, data); err != nil {
			writeError(w, err)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// readBody reads the request body; a body over the cap is answered 413.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	switch {
	case isTooLarge(err):
		writeErrorStatus(w, http.StatusRequestEntityTooLarge, events.CodeBadRequest, err.Error())
		return nil, false
	case err != nil:
		writeError(w, protoError(events.CodeBadRequest, "reading the body: "+err.Error()))
		return nil, false
	}
	return body, true
}

// flags are the boolean fields a GET route takes as query parameters.
var flags = map[string][]string{"get_messages": {"all"}}

// queryFlags turns the query of a route without a body into the
// command's fields (?all=true is {"all":true}); a parameter the command
// does not take, or a value that is not a boolean, is answered 400.
func queryFlags(w http.ResponseWriter, r *http.Request, name string) ([]byte, bool) {
	fields := map[string]bool{}
	for k, vs := range r.URL.Query() {
		if k == "access_token" {
			continue
		}
		if !slices.Contains(flags[name], k) {
			writeError(w, protoError(events.CodeBadRequest, fmt.Sprintf("%s %s takes no parameter %q", r.Method, r.URL.Path, k)))
			return nil, false
		}
		v, err := strconv.ParseBool(vs[0])
		if err != nil {
			writeError(w, protoError(events.CodeBadRequest, fmt.Sprintf("%s must be true or false, not %q", k, vs[0])))
			return nil, false
		}
		fields[k] = v
	}
	if len(fields) == 0 {
		return nil, true
	}
	b, _ := json.Marshal(fields) // a map of booleans: cannot fail
	return b, true
}

// noQuery answers 400 when a route that takes no parameters got some
// (access_token aside).
func (s *Server) noQuery(w http.ResponseWriter, r *http.Request) bool {
	for k := range r.URL.Query() {
		if k != "access_token" {
			writeError(w, protoError(events.CodeBadRequest, fmt.Sprintf("%s %s takes no parameter %q", r.Method, r.URL.Path, k)))
			return false
		}
	}
	return true
}

// catalog answers what the caller's sessions can be created with
// (tack.Runtime.CatalogOf): the models to choose from, the tools and the
// plugins, as far as the caller is granted them.
func (s *Server) catalog(w http.ResponseWriter, r *http.Request) {
	if !s.noQuery(w, r) {
		return
	}
	b, err := json.Marshal(s.rt.CatalogOf(userOf(r)))
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}
