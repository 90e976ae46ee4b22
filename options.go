package tack

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/policy"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/mcp"
	"github.com/tack-run/tack/tools/sandbox"
	"github.com/tack-run/tack/tools/workspace"
	"github.com/tack-run/tack/tracing"
)

// Option configures a Runtime.
type Option func(*config)

type config struct {
	// sessions is what every session is given, as it is handed to them.
	sessions  actors.Settings
	logger    *zap.Logger
	system    *actor.ActorSystem
	models    []llm.Resolver
	tools     []tools.Tool
	timeout   time.Duration
	dir       string
	plugins   *plugins.Registry
	named     []namedPlugin
	metrics   *metrics.Metrics
	elsewhere Elsewhere
	mcp       *mcp.Manager
	tracer    *tracing.Tracer
	policy    *policy.Policy
	// workspaces and sandbox are where and how the tools work
	// (workspace.go).
	workspaces *workspace.Workspaces
	sandbox    *sandbox.Sandbox
	agents     map[string]Agent
	// defaultAgent is WithAgents' def.
	defaultAgent string
}

type namedPlugin struct {
	name    string
	factory plugins.Factory
}

// WithMaxImageBytes bounds the decoded bytes of each data-URL image a
// prompt or steering message carries (default llm.DefaultMaxImageBytes,
// 5 MiB); a larger one is bad_request.
func WithMaxImageBytes(n int64) Option { return func(c *config) { c.sessions.MaxImageBytes = n } }

// WithLogger logs through l; nil (the default) logs nothing.
func WithLogger(l *zap.Logger) Option { return func(c *config) { c.logger = l } }

// WithActorSystem runs sessions in an existing actor system instead of one
// the runtime creates (and stops on Close).
func WithActorSystem(s *actor.ActorSystem) Option { return func(c *config) { c.system = s } }

// WithModels adds model resolvers, tried in order before the scripted
// models (`script:<path>`), which are always available.
func WithModels(r ...llm.Resolver) Option {
	return func(c *config) { c.models = append(c.models, r...) }
}

// WithTools makes tools available to sessions that name them. The demo
// tools are always available.
func WithTools(t ...tools.Tool) Option { return func(c *config) { c.tools = append(c.tools, t...) } }

// WithClock stamps events with clock instead of time.Now.
func WithClock(clock func() time.Time) Option { return func(c *config) { c.sessions.Clock = clock } }

// WithRingSize sets how many events each session keeps for replay (default 1024).
func WithRingSize(n int) Option { return func(c *config) { c.sessions.RingSize = n } }

// WithSteeringLimit bounds each session's steering queue (default 3).
func WithSteeringLimit(n int) Option { return func(c *config) { c.sessions.SteeringLimit = n } }

// WithPromptLimit bounds each session's prompt queue (default 100).
func WithPromptLimit(n int) Option { return func(c *config) { c.sessions.PromptLimit = n } }

// WithToolGrace sets how long a cancelled tool may take to return before it
// is counted as abandoned (default 1 s). The session never waits for it.
func WithToolGrace(d time.Duration) Option { return func(c *config) { c.sessions.ToolGrace = d } }

// WithRequestTimeout bounds how long a command waits for its session's
// answer when its context has no deadline (default 10 s).
func WithRequestTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithScriptDir reads `script:<path>` models from files inside dir only
// (default: the working directory): an absolute path, or one that leaves
// dir (by "..", or by a symbolic link), is an unknown model. With dir ""
// no script file is read; the built-in `script:demo` and inline scripts
// remain.
func WithScriptDir(dir string) Option { return func(c *config) { c.dir = dir } }

// WithPlugins makes a plugin available by name to sessions that configure
// it (SessionConfig.Plugins, create_session's "plugins").
func WithPlugins(name string, f plugins.Factory) Option {
	return func(c *config) { c.named = append(c.named, namedPlugin{name, f}) }
}

// WithPluginRegistry uses r for the plugins sessions may configure (the
// CLI registers the built-in ones in it); WithPlugins adds to it.
func WithPluginRegistry(r *plugins.Registry) Option { return func(c *config) { c.plugins = r } }

// WithApprovalTimeout sets how long a call held for approval waits when
// its plugin sets no timeout (default 120 s).
func WithApprovalTimeout(d time.Duration) Option {
	return func(c *config) { c.sessions.ApprovalTimeout = d }
}

// WithPluginBudget sets how long one plugin may take to answer one hook
// before it is disabled for the session (default 50 ms).
func WithPluginBudget(d time.Duration) Option { return func(c *config) { c.sessions.PluginBudget = d } }

// WithStore keeps sessions in st: every committed message and queued input
// is durable before any event tells of it, and a stored session is
// restored on first use after a restart. Without a store, sessions live in
// memory only. The caller closes st after the runtime.
func WithStore(st store.Store) Option { return func(c *config) { c.sessions.Store = st } }

// WithNode names this process as the owner of the stored sessions it
// loads (default: host/pid/start time).
func WithNode(name string) Option { return func(c *config) { c.sessions.Node = name } }

// WithLeaseTTL sets how long this node owns a loaded session without
// renewing (default 30 s); another node may take the session after that.
func WithLeaseTTL(d time.Duration) Option { return func(c *config) { c.sessions.LeaseTTL = d } }

// WithLeaseWait makes the restore of a session another node holds wait up
// to d for that node to give its lease up or for the lease to expire,
// instead of failing at once with not_alive; the commands sent meanwhile
// wait too. Cluster members (tack node --cluster) set it, so that the
// member a session moves to takes it over once the member it moved from
// lets go or is gone.
func WithLeaseWait(d time.Duration) Option { return func(c *config) { c.sessions.LeaseWait = d } }

// WithMetrics counts what the runtime's sessions do in m (sessions by
// state, runs, abort delivery, tokens, tool durations, store writes; see
// docs/metrics.md); serve m.Handler() to expose them to Prometheus. Nil
// (the default) counts nothing. Metrics may be shared by several runtimes,
// whose counts then add up.
func WithMetrics(m *metrics.Metrics) Option { return func(c *config) { c.metrics = m } }

// DefaultPassivateAfter is how long a stored session stays loaded while
// quiet in tack serve and tack node unless told otherwise.
const DefaultPassivateAfter = 10 * time.Minute

// WithPassivateAfter stops a stored session that has been quiet for d —
// idle, no run (nothing waiting for an approval or an answer), nothing
// queued, no in-process subscriber — to release its memory; its next
// command restores it from the store as after a restart. Actor
// subscribers (SubscribePID, remote ones) stay subscribed: the restored
// session sends to them again, starting with events_lost for the gap in
// numbering. 0 (the default of New) never passivates; without a store
// the option does nothing.
func WithPassivateAfter(d time.Duration) Option {
	return func(c *config) { c.sessions.PassivateAfter = d }
}

// WithMCP offers the tools of m's MCP servers: a session names them
// "<server>/<tool>", or all of a server's as "mcp:<server>" (docs/mcp.md).
// The runtime closes m on Close.
func WithMCP(m *mcp.Manager) Option { return func(c *config) { c.mcp = m } }

// WithTracerProvider traces what the runtime's sessions do with spans
// from tp (a span per run, model request, tool call, compaction and
// sub-agent; see docs/observability.md); opts tune it (tracing.WithContent
// puts message content on spans). Nil (the default) traces nothing and
// costs nothing per event.
func WithTracerProvider(tp trace.TracerProvider, opts ...tracing.Option) Option {
	return func(c *config) {
		c.tracer = nil
		if tp != nil {
			c.tracer = tracing.New(tp, opts...)
		}
	}
}
