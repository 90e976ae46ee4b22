package tack

import (
	"errors"
	"fmt"
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

// Option configures a Runtime: it writes into the Config New starts from.
type Option func(*Config)

// Config is what a Runtime is made of. New starts from DefaultConfig,
// applies its options in order, checks the result with Validate and
// builds the runtime; NewFromConfig does the same from a Config made by
// hand. The With… options document each field.
type Config struct {
	// Sessions is what every session is given: limits, timeouts, the
	// clock, the store, this node's name and leases, passivation
	// (WithStore, WithRingSize, WithPassivateAfter...).
	Sessions actors.Settings
	// Logger logs; nil logs nothing (WithLogger).
	Logger *zap.Logger
	// ActorSystem runs the sessions; nil makes one, stopped on Close
	// (WithActorSystem).
	ActorSystem *actor.ActorSystem
	// Models are tried in order before the scripted models (WithModels).
	Models []llm.Resolver
	// Tools are offered besides the built-in ones (WithTools).
	Tools []tools.Tool
	// RequestTimeout bounds a command's wait for its session when its
	// context has no deadline (WithRequestTimeout).
	RequestTimeout time.Duration
	// ScriptDir is where `script:<path>` models are read from; "" reads
	// none (WithScriptDir).
	ScriptDir string
	// Plugins are the plugins sessions may configure; nil makes an empty
	// registry (WithPluginRegistry, WithPlugins).
	Plugins *plugins.Registry
	// Metrics counts what sessions do; nil counts nothing (WithMetrics).
	Metrics *metrics.Metrics
	// Elsewhere, when set, is where every session lives: the runtime
	// hosts none (WithSessionsElsewhere).
	Elsewhere Elsewhere
	// MCP offers MCP servers' tools; the runtime closes it (WithMCP).
	MCP *mcp.Manager
	// Tracer traces sessions; nil traces nothing (WithTracerProvider).
	Tracer *tracing.Tracer
	// Policy is what each user may use and how much; nil allows
	// everything (WithPolicy).
	Policy *policy.Policy
	// Workspaces are where the tools work; nil shares the working
	// directory (WithWorkspaces). Sandbox, when set, confines shell
	// (WithSandbox).
	Workspaces *workspace.Workspaces
	Sandbox    *sandbox.Sandbox
	// Agents are the named session templates and DefaultAgent their
	// default (WithAgents).
	Agents       map[string]Agent
	DefaultAgent string

	// named are WithPlugins' plugins, registered into Plugins by New.
	named []namedPlugin
}

// DefaultConfig returns what New starts from: scripted models read from
// the working directory, the demo tools, a 10 s request timeout, and
// sessions with actors' defaults, in memory only.
func DefaultConfig() Config {
	return Config{RequestTimeout: defaultTimeout, ScriptDir: ".", Sessions: actors.DefaultSettings()}
}

// Validate reports what in c cannot make a runtime.
func (c Config) Validate() error {
	if c.RequestTimeout <= 0 {
		return fmt.Errorf("tack: the request timeout must be positive, not %v", c.RequestTimeout)
	}
	if c.Elsewhere != nil && c.Sessions.Store == nil {
		return errors.New("tack: WithSessionsElsewhere needs WithStore: the store the sessions are kept in, for their owners and the list")
	}
	if c.DefaultAgent != "" {
		if _, ok := c.Agents[c.DefaultAgent]; !ok {
			return fmt.Errorf("tack: the default agent %q is not an agent", c.DefaultAgent)
		}
	}
	return nil
}

type namedPlugin struct {
	name    string
	factory plugins.Factory
}

// WithMaxImageBytes bounds the decoded bytes of each data-URL image a
// prompt or steering message carries (default llm.DefaultMaxImageBytes,
// 5 MiB); a larger one is bad_request.
func WithMaxImageBytes(n int64) Option { return func(c *Config) { c.Sessions.MaxImageBytes = n } }

// WithLogger logs through l; nil (the default) logs nothing.
func WithLogger(l *zap.Logger) Option { return func(c *Config) { c.Logger = l } }

// WithActorSystem runs sessions in s, an actor system of the caller's,
// instead of one the runtime creates and stops on Close: a program with
// protoactor actors of its own runs its sessions beside them, and
// Session.SubscribePID sends a session's events to them. The runtime does
// not stop s: its owner shuts it down after Close. actors.NewSystem makes
// a system as the runtime makes its own, whose process table keeps less
// memory per session that has come and gone than protoactor's default.
func WithActorSystem(s *actor.ActorSystem) Option { return func(c *Config) { c.ActorSystem = s } }

// WithModels adds model resolvers, tried in order before the scripted
// models (`script:<path>`), which are always available.
func WithModels(r ...llm.Resolver) Option {
	return func(c *Config) { c.Models = append(c.Models, r...) }
}

// WithTools makes tools available to sessions that name them. The demo
// tools are always available.
func WithTools(t ...tools.Tool) Option { return func(c *Config) { c.Tools = append(c.Tools, t...) } }

// WithClock stamps events with clock instead of time.Now.
func WithClock(clock func() time.Time) Option { return func(c *Config) { c.Sessions.Clock = clock } }

// WithRingSize sets how many events each session keeps for replay (default 1024).
func WithRingSize(n int) Option { return func(c *Config) { c.Sessions.RingSize = n } }

// WithSteeringLimit bounds each session's steering queue (default 3).
func WithSteeringLimit(n int) Option { return func(c *Config) { c.Sessions.SteeringLimit = n } }

// WithPromptLimit bounds each session's prompt queue (default 100).
func WithPromptLimit(n int) Option { return func(c *Config) { c.Sessions.PromptLimit = n } }

// WithToolGrace sets how long a cancelled tool may take to return before it
// is counted as abandoned (default 1 s). The session never waits for it.
func WithToolGrace(d time.Duration) Option { return func(c *Config) { c.Sessions.ToolGrace = d } }

// WithRequestTimeout bounds how long a command waits for its session's
// answer when its context has no deadline (default 10 s).
func WithRequestTimeout(d time.Duration) Option { return func(c *Config) { c.RequestTimeout = d } }

// WithScriptDir reads `script:<path>` models from files inside dir only
// (default: the working directory): an absolute path, or one that leaves
// dir (by "..", or by a symbolic link), is an unknown model. With dir ""
// no script file is read; the built-in `script:demo` and inline scripts
// remain.
func WithScriptDir(dir string) Option { return func(c *Config) { c.ScriptDir = dir } }

// WithPlugins makes a plugin available by name to sessions that configure
// it (SessionConfig.Plugins, create_session's "plugins").
func WithPlugins(name string, f plugins.Factory) Option {
	return func(c *Config) { c.named = append(c.named, namedPlugin{name, f}) }
}

// WithPluginRegistry uses r for the plugins sessions may configure (the
// CLI registers the built-in ones in it); WithPlugins adds to it.
func WithPluginRegistry(r *plugins.Registry) Option { return func(c *Config) { c.Plugins = r } }

// WithApprovalTimeout sets how long a call held for approval waits when
// its plugin sets no timeout (default 120 s).
func WithApprovalTimeout(d time.Duration) Option {
	return func(c *Config) { c.Sessions.ApprovalTimeout = d }
}

// WithPluginBudget sets how long one plugin may take to answer one hook
// before it is disabled for the session (default 50 ms).
func WithPluginBudget(d time.Duration) Option { return func(c *Config) { c.Sessions.PluginBudget = d } }

// WithStore keeps sessions in st: every committed message and queued input
// is durable before any event tells of it, and a stored session is
// restored on first use after a restart. Without a store, sessions live in
// memory only. The caller closes st after the runtime.
func WithStore(st store.Store) Option { return func(c *Config) { c.Sessions.Store = st } }

// WithNode names this process as the owner of the stored sessions it
// loads (default: host/pid/start time).
func WithNode(name string) Option { return func(c *Config) { c.Sessions.Node = name } }

// WithLeaseTTL sets how long this node owns a loaded session without
// renewing (default 30 s); another node may take the session after that.
func WithLeaseTTL(d time.Duration) Option { return func(c *Config) { c.Sessions.LeaseTTL = d } }

// WithLeaseWait makes the restore of a session another node holds wait up
// to d for that node to give its lease up or for the lease to expire,
// instead of failing at once with not_alive; the commands sent meanwhile
// wait too. Cluster members (tack node --cluster) set it, so that the
// member a session moves to takes it over once the member it moved from
// lets go or is gone.
func WithLeaseWait(d time.Duration) Option { return func(c *Config) { c.Sessions.LeaseWait = d } }

// WithMetrics counts what the runtime's sessions do in m (sessions by
// state, runs, abort delivery, tokens, tool durations, store writes; see
// docs/metrics.md); serve m.Handler() to expose them to Prometheus. Nil
// (the default) counts nothing. Metrics may be shared by several runtimes,
// whose counts then add up.
func WithMetrics(m *metrics.Metrics) Option { return func(c *Config) { c.Metrics = m } }

// DefaultPassivateAfter is how long a stored session stays loaded while
// quiet in tack serve and tack node unless told otherwise.
const DefaultPassivateAfter = 10 * time.Minute

// WithPassivateAfter stops a stored session that has been quiet for d —
// idle, no run (nothing waiting for an approval or an answer), nothing
// queued, no in-process subscriber — to release its memory; its next
// command restores it from the store as after a restart. Actor
// subscribers (SubscribePID, remote ones) stay subscribed: the restored
// session sends to them again, starting with events_lost for the gap in
// numbering. 0 (the default of New) never passivates. Without a store
// (WithStore) the runtime parks a quiet session instead: it writes the
// session whole into a compact record in memory (store/memory) as it
// stops — under 1 KiB for a short session, against about 2.2 KiB for a
// live one (docs/benchmarks.md) — and drops the record when the session
// wakes, which then numbers its events on with no gap. Such a runtime
// makes a new session parked too (its record, about 170 B), which its
// first command starts, unless its user has a max_sessions bound
// (WithPolicy), which counts loaded sessions. Nothing is written while a
// session runs, so a turn costs what it costs with no store
// (BenchmarkTurnStore); a parked session is gone with the process, as
// sessions without a store always are. A session is taken up again from
// its model's name: one whose model the resolvers would not give again by
// that name (llm.ResolvesAgain) stays loaded, with a store or without.
func WithPassivateAfter(d time.Duration) Option {
	return func(c *Config) { c.Sessions.PassivateAfter = d }
}

// WithMCP offers the tools of m's MCP servers: a session names them
// "<server>/<tool>", or all of a server's as "mcp:<server>" (docs/mcp.md).
// The runtime closes m on Close.
func WithMCP(m *mcp.Manager) Option { return func(c *Config) { c.MCP = m } }

// WithTracerProvider traces what the runtime's sessions do with spans
// from tp (a span per run, model request, tool call, compaction and
// sub-agent; see docs/observability.md); opts tune it (tracing.WithContent
// puts message content on spans). Nil (the default) traces nothing and
// costs nothing per event.
func WithTracerProvider(tp trace.TracerProvider, opts ...tracing.Option) Option {
	return func(c *Config) {
		c.Tracer = nil
		if tp != nil {
			c.Tracer = tracing.New(tp, opts...)
		}
	}
}
