package http

import (
	"context"

	"github.com/tack-run/tack/server/a2aserver"
)

// User is the caller of the request whose context ctx is (or derives
// from): the user its credential names, LocalUser without auth. It is
// what an A2A server made for WithA2A takes as its Options.User.
func User(ctx context.Context) string { return userFrom(ctx) }

// a2aRoutes serves the agents over A2A (docs/a2a.md), behind auth like
// every route: the JSON-RPC endpoints and the agent cards.
func (s *Server) a2aRoutes() {
	a := s.opts.a2a
	if a == nil {
		var err error
		if a, err = a2aserver.New(s.rt, a2aserver.Options{Auth: s.opts.auth != nil, User: User, Logger: s.opts.logger}); err != nil {
			panic("http: " + err.Error()) // tasks in memory: cannot fail
		}
	}
	for _, r := range a.Routes() {
		s.handle(r.Pattern, streaming(r.Handler))
	}
}
