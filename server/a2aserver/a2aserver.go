// Package a2aserver serves a runtime's agents over the Agent2Agent
// protocol (docs/a2a.md) with the official Go SDK
// (github.com/a2aproject/a2a-go/v2): each agent at /a2a/{agent} over
// JSON-RPC with SSE streaming, its agent card at
// /a2a/{agent}/.well-known/agent-card.json (the default agent's also at
// /.well-known/agent-card.json). A task's context is a session of the
// agent owned by the caller, made at its first message; a task is one
// run.
package a2aserver

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.uber.org/zap"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/server/agentrun"
)

// Options configure New.
type Options struct {
	// TaskDir keeps each agent's tasks in files under TaskDir/<agent>, so
	// that they survive a restart (the sessions are the runtime's store's);
	// "" keeps them in memory.
	TaskDir string
	// Auth says that callers authenticate with bearer tokens: the agent
	// cards name the scheme.
	Auth bool
	// User is the caller of a request whose context ctx is: the caller's
	// authentication sets it. Required.
	User func(ctx context.Context) string
	// AbortTimeout bounds how long a cancel waits for its session to take
	// the abort (default 5 s).
	AbortTimeout time.Duration
	// Logger logs what fails out of any request's way (removing a deleted
	// session's task files); nil logs nothing.
	Logger *zap.Logger
}

// Server serves the agents.
type Server struct {
	rt     *tack.Runtime
	opt    Options
	mux    *http.ServeMux
	routes []Route
	// stores are the agents' task stores, by agent.
	stores map[string]*taskStore
}

// Route is one route of a Server: a pattern of net/http's ServeMux and
// its handler.
type Route struct {
	Pattern string
	Handler http.Handler
}

// New returns a server for every agent of rt.
func New(rt *tack.Runtime, opt Options) (*Server, error) {
	if opt.AbortTimeout <= 0 {
		opt.AbortTimeout = 5 * time.Second
	}
	s := &Server{rt: rt, opt: opt, mux: http.NewServeMux(), stores: map[string]*taskStore{}}
	for _, name := range rt.AgentNames() {
		dir := ""
		if opt.TaskDir != "" {
			dir = filepath.Join(opt.TaskDir, name)
		}
		store, err := newStore(dir)
		if err != nil {
			return nil, err
		}
		s.stores[name] = store
		h := a2asrv.NewHandler(&executor{rt: rt, agent: name, abortTimeout: opt.AbortTimeout, forget: s.forget},
			a2asrv.WithTaskStore(store), a2asrv.WithCallInterceptors(callers{s}))
		s.route("POST /a2a/"+name, a2asrv.NewJSONRPCHandler(ownedSubscriptions{settledCancels{h}}, a2asrv.WithTransportKeepAlive(15*time.Second)))
		s.route("GET /a2a/"+name+a2asrv.WellKnownAgentCardPath, s.cardHandler(name))
	}
	if def := rt.DefaultAgent(); def != "" {
		s.route("GET "+a2asrv.WellKnownAgentCardPath, s.cardHandler(def))
	}
	rt.OnDelete(s.forget)
	s.forgetGone()
	return s, nil
}

// forgetGone forgets the tasks read back from files whose session is
// gone: deleted while no server of this process listened (by tack rpc on
// the same store, or on another node).
func (s *Server) forgetGone() {
	gone := map[string]bool{}
	for _, st := range s.stores {
		for _, id := range st.contexts() {
			if _, seen := gone[id]; !seen {
				_, err := s.rt.User(context.Background(), id)
				gone[id] = tack.Code(err) == events.CodeInvalidSession
			}
		}
	}
	for id, g := range gone {
		if g {
			s.forget(id)
		}
	}
}

// forget removes the tasks of deleted session id (a context of some
// agent) and of its sub-agents from every agent's store, memory and
// files: afterwards GetTask and ListTasks know none of them. A task
// still streaming has seen its run aborted and its session gone; its
// last update finds the task gone, and its stream ends.
func (s *Server) forget(id string) {
	for name, st := range s.stores {
		if err := st.forget(id); err != nil && s.opt.Logger != nil {
			s.opt.Logger.Warn("a2a: the tasks of a deleted session are not all removed", zap.String("agent", name),
				zap.String("session", id), zap.Error(err))
		}
	}
}

// route adds a route.
func (s *Server) route(pattern string, h http.Handler) {
	s.routes = append(s.routes, Route{Pattern: pattern, Handler: h})
	s.mux.Handle(pattern, h)
}

// Routes are the server's routes, for the caller's router: each agent's
// endpoint and card, and the default agent's card.
func (s *Server) Routes() []Route { return s.routes }

// ServeHTTP serves one request of Routes (net/http's 404 and 405
// otherwise).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// cardHandler serves the card of agent name to a caller who may use the
// agent, and 404 to one who may not: another user's agents are not the
// caller's to read about (their messages are refused forbidden anyway).
func (s *Server) cardHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.rt.MayUseAgent(s.opt.User(r.Context()), name) {
			http.NotFound(w, r)
			return
		}
		card := s.Card(name, baseURL(r))
		a2asrv.NewStaticAgentCardHandler(card).ServeHTTP(w, r)
	})
}

// baseURL is the scheme and host a request reached the server at.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Card is the agent card of agent name served at base (scheme://host):
// its name and description, a skill per tool (the agent itself when it
// names none), JSON-RPC at base/a2a/{name}, streaming, and the bearer
// scheme when callers authenticate.
func (s *Server) Card(name, base string) *a2a.AgentCard {
	a, _ := s.rt.Agent(name)
	card := &a2a.AgentCard{
		Name: name, Description: a.Description, Version: agentrun.Version(),
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(base+"/a2a/"+name, a2a.TransportProtocolJSONRPC)},
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain", "application/json"},
		DefaultOutputModes:  []string{"text/plain", "application/json"},
		Skills:              []a2a.AgentSkill{},
	}
	described := map[string]string{}
	for _, t := range s.rt.Catalog().Tools {
		described[t.Name] = t.Description
	}
	tools := slices.Clone(a.Tools)
	slices.Sort(tools)
	for _, t := range tools {
		card.Skills = append(card.Skills, a2a.AgentSkill{ID: t, Name: t, Description: described[t], Tags: []string{"tool"}})
	}
	if len(card.Skills) == 0 {
		card.Skills = append(card.Skills, a2a.AgentSkill{ID: name, Name: name, Description: a.Description, Tags: []string{"agent"}})
	}
	if s.opt.Auth {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer",
			Description: "a static token or a JWT of the server's --auth file"}}
		card.SecurityRequirements = a2a.SecurityRequirementsOptions{{"bearer": {}}}
	}
	return card
}

// callers puts the request's user into the SDK's call context: tasks
// are their creator's, sessions too.
type callers struct{ s *Server }

// Before sets the caller.
func (c callers) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	cc.User = &a2asrv.User{Name: c.s.opt.User(ctx), Authenticated: c.s.opt.Auth}
	return ctx, nil, nil
}

// After does nothing.
func (callers) After(context.Context, *a2asrv.CallContext, *a2asrv.Response) error { return nil }
