package http

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/server/a2aserver"
	"github.com/tack-run/tack/server/auth"
)

// Defaults of the options.
const (
	DefaultMaxBodyBytes   = 1 << 20
	DefaultKeepAlive      = 15 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	DefaultEventBuffer    = 4096
	// DefaultShutdownGrace is longer than the 5 s net/http keeps
	// waiting, in Shutdown, for a connection that has sent no request
	// yet: with 5 s, a client that had just connected made every
	// graceful shutdown run out its grace and close by force.
	DefaultShutdownGrace = 10 * time.Second
)

// LocalUser is every request's user when the server has no authenticator.
const LocalUser = "local"

// Server serves the protocol for one runtime.
type Server struct {
	rt      *tack.Runtime
	opts    options
	handler http.Handler
	mux     *http.ServeMux
	// draining ends with Drain: event streams end.
	draining context.Context
	drain    context.CancelFunc
	drained  sync.Once
	// sockets are the open WebSockets, which Serve waits for.
	sockets *socketSet
	// public are the paths served without a credential: /healthz and the
	// UI's files.
	public map[string]bool
	// crossOrigin refuses state-changing requests from other origins but
	// the trusted ones (guard); anyOrigin trusts every origin.
	crossOrigin *http.CrossOriginProtection
	anyOrigin   bool
	// requests counts each user's requests against requests_per_minute;
	// open, those open at once against max_open_requests.
	requests *requestLimiter
	open     openRequests
}

// Option configures a Server.
type Option func(*options)

type options struct {
	auth           *auth.Authenticator
	origins        []string
	hosts          []string
	maxBody        int64
	keepAlive      time.Duration
	requestTimeout time.Duration
	eventBuffer    int
	logger         *zap.Logger
	grace          time.Duration
	metrics        *metrics.Metrics
	ui             fs.FS
	now            func() time.Time
	a2a            *a2aserver.Server
}

// WithAuth makes every request (but /healthz) carry a credential that a
// checks; without it every request is LocalUser. a's Policy bounds each
// user's requests a minute (its limits' requests_per_minute); the
// runtime takes the rest of the policy (tack.WithPolicy).
func WithAuth(a *auth.Authenticator) Option { return func(o *options) { o.auth = a } }

// WithCORSOrigins trusts web pages of these origins (scheme://host[:port],
// "*" for any) to call the server: they get CORS headers, and their
// state-changing requests and WebSocket upgrades are not refused as
// cross-origin (see CheckOrigins). "*" counts only with WithAuth; an
// origin CheckOrigins refuses is not trusted. Without it no CORS headers
// are sent and only the server's own origin may change anything.
func WithCORSOrigins(origins ...string) Option {
	return func(o *options) { o.origins = append(o.origins, origins...) }
}

// WithAllowedHosts answers only requests whose Host header names one of
// hosts (a name or address, with any port unless one is given: "[::1]",
// "tack.example:443"); others get 403 forbidden. Without WithAuth only
// loopback names are answered whatever the option says; with WithAuth
// and without this option, any Host is.
func WithAllowedHosts(hosts ...string) Option {
	return func(o *options) { o.hosts = append(o.hosts, hosts...) }
}

// WithMaxBodyBytes caps request bodies (default 1 MiB); a larger one is
// 413 bad_request.
func WithMaxBodyBytes(n int64) Option { return func(o *options) { o.maxBody = n } }

// WithKeepAlive sets how often an idle event stream gets a keepalive
// comment, and how often a WebSocket is pinged (default 15 s): a socket
// whose client has not answered a ping by the next one is dropped.
func WithKeepAlive(d time.Duration) Option { return func(o *options) { o.keepAlive = d } }

// WithRequestTimeout bounds each command request, including its store
// reads (default 30 s); event streams are not bounded.
func WithRequestTimeout(d time.Duration) Option { return func(o *options) { o.requestTimeout = d } }

// WithEventBuffer sets how many events an event stream may fall behind
// before it is ended with events_lost (default 4096).
func WithEventBuffer(n int) Option { return func(o *options) { o.eventBuffer = n } }

// WithLogger logs requests, panics and failures to l; nil (the default)
// logs nothing.
func WithLogger(l *zap.Logger) Option { return func(o *options) { o.logger = l } }

// WithShutdownGrace bounds how long Serve waits for requests to finish
// once its context ends (default 10 s). Keep it over 5 s: net/http waits
// that long for a connection that has sent no request yet (a browser's
// preconnect, a client's spare), and a shorter grace then always runs
// out.
func WithShutdownGrace(d time.Duration) Option { return func(o *options) { o.grace = d } }

// WithMetrics counts every request by route and status and every live
// stream in m, and serves m at GET /metrics (behind auth, like every
// route but /healthz). Pass the same m to the runtime (tack.WithMetrics)
// for the sessions' own metrics.
func WithMetrics(m *metrics.Metrics) Option { return func(o *options) { o.metrics = m } }

// WithUI serves the browser UI in fsys at / (its index.html) and its
// other files at their paths, without a credential: they hold no data.
// New panics when fsys cannot be read; the embedded UI (package web)
// always can.
func WithUI(fsys fs.FS) Option { return func(o *options) { o.ui = fsys } }

// WithA2A serves the agents over A2A with a (docs/a2a.md), made with
// User as its Options.User; without it the server makes one that keeps
// its tasks in memory.
func WithA2A(a *a2aserver.Server) Option { return func(o *options) { o.a2a = a } }

// WithClock reads the time from now (default time.Now): the minute of
// requests_per_minute.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// New returns a server for rt.
func New(rt *tack.Runtime, opts ...Option) *Server {
	o := options{maxBody: DefaultMaxBodyBytes, keepAlive: DefaultKeepAlive, requestTimeout: DefaultRequestTimeout,
		eventBuffer: DefaultEventBuffer, grace: DefaultShutdownGrace, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = zap.NewNop()
	}
	if o.auth == nil { // every page would be trusted, and nothing asks who calls
		o.origins = slices.DeleteFunc(slices.Clone(o.origins), func(origin string) bool { return origin == "*" })
	}
	draining, drain := context.WithCancel(context.Background())
	s := &Server{rt: rt, opts: o, mux: http.NewServeMux(), draining: draining, drain: drain, sockets: newSocketSet(),
		public: map[string]bool{"/healthz": true}, crossOrigin: http.NewCrossOriginProtection(),
		requests: &requestLimiter{now: o.now, by: map[string]*requestWindow{}}}
	for _, origin := range o.origins {
		if origin == "*" {
			s.anyOrigin = true
		} else if checkOrigin(origin) == nil {
			_ = s.crossOrigin.AddTrustedOrigin(origin) // checked: cannot fail
		}
	}
	s.routes()
	s.handler = s.logRequests(noSniff(s.recoverPanics(s.guard(s.cors(s.authenticate(s.limitRequests(s.limitBody(traceContext(http.HandlerFunc(s.route))))))))))
	return s
}

// routes registers every route. A new route goes here; it runs behind
// the middlewares of New.
func (s *Server) routes() {
	s.handle("GET /healthz", http.HandlerFunc(s.health))
	s.handle("GET /v1/catalog", http.HandlerFunc(s.catalog))
	s.handle("POST /v1/sessions", s.global("create_session", http.StatusCreated))
	s.handle("GET /v1/sessions", s.list())
	s.handle("GET /v1/sessions/{id}", s.session("get_state", http.StatusOK, noBody))
	s.handle("DELETE /v1/sessions/{id}", s.session("delete_session", http.StatusNoContent, noBody))
	s.handle("POST /v1/sessions/{id}/close", s.session("close_session", http.StatusNoContent, jsonBody))
	s.handle("GET /v1/sessions/{id}/messages", s.session("get_messages", http.StatusOK, noBody))
	s.handle("GET /v1/sessions/{id}/export", s.session("export_session", http.StatusOK, noBody))
	s.handle("POST /v1/sessions/import", s.importSession())
	for _, name := range []string{"prompt", "steer", "abort", "approve", "reject", "respond", "switch_model",
		"compact", "attach_tools", "detach_tools"} {
		s.handle("POST /v1/sessions/{id}/"+name, s.session(name, http.StatusOK, jsonBody))
	}
	s.handle("POST /v1/sessions/{id}/fork", s.session("fork", http.StatusCreated, jsonBody))
	s.handle("GET /v1/sessions/{id}/events", http.HandlerFunc(s.events))
	s.handle("GET /v1/sessions/{id}/ws", http.HandlerFunc(s.socket))
	s.handle("POST /v1/sessions/{id}/agui", s.agui())
	s.fileRoutes()
	s.handle("/mcp", s.mcp())
	s.a2aRoutes()
	if s.opts.metrics != nil {
		s.handle("GET /metrics", s.opts.metrics.Handler())
	}
	if s.opts.ui != nil {
		if err := s.uiRoutes(s.opts.ui); err != nil {
			panic("http: WithUI: " + err.Error())
		}
	}
}

// handle registers a route, counted under its pattern when the server has
// metrics.
func (s *Server) handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, s.opts.metrics.Instrument(pattern, h))
}

// stream counts a live stream of kind until the returned function is
// called.
func (s *Server) stream(kind string) (done func()) { return s.opts.metrics.Subscriber(kind) }

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Drain ends every event stream (each gets a final comment) and closes
// every WebSocket with status 1001 going away, and makes new ones end at
// once: call it before http.Server.Shutdown, which waits for handlers to
// return (but not for WebSockets: WaitSockets does). Calling it again
// does nothing.
func (s *Server) Drain() {
	s.drained.Do(func() {
		s.sockets.drain()
		s.drain()
	})
}

// untilDrain is ctx, ended by Drain as well.
func (s *Server) untilDrain(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.draining, cancel)
	return ctx, func() { stop(); cancel() }
}

// WaitSockets waits, after Drain, until every WebSocket's handler is done;
// when ctx ends first it drops the sockets left without a close
// handshake, and waits for their handlers.
func (s *Server) WaitSockets(ctx context.Context) { s.sockets.wait(ctx) }

// Serve serves on ln until ctx ends, then shuts down gracefully: it stops
// accepting, ends the event streams and WebSockets, and waits up to the
// shutdown grace for requests and sockets in flight before closing what
// is left. It returns nil
// after a shutdown. The runtime stays open: its owner closes it.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      s.opts.requestTimeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(s.opts.logger),
	}
	hs.RegisterOnShutdown(s.Drain)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		err = errors.Join(err, hs.Close())
	}
	s.Drain() // Shutdown runs it on a goroutine of its own
	s.WaitSockets(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}`))
}
