package http

import (
	"net/http"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/server/agui"
)

// agui serves AG-UI runs (package agui) on the caller's own sessions.
func (s *Server) agui() http.Handler {
	h := &agui.Handler{Session: s.owned, MaxBody: s.opts.maxBody, Keepalive: s.opts.keepAlive, Audit: s.auditAGUI}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer s.stream(metrics.KindAGUI)()
		h.ServeHTTP(w, r)
	})
}

// owned returns session id when the request's user owns it; another
// user's session is invalid_session, as if it did not exist.
func (s *Server) owned(r *http.Request, id string) (*tack.Session, error) {
	if err := s.owns(r.Context(), r, id); err != nil {
		return nil, err
	}
	return s.rt.Session(id)
}
