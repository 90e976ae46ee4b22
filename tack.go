package tack

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/internal/replies"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/placement"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/policy"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
	"github.com/tack-run/tack/tools/mcp"
	"github.com/tack-run/tack/tools/workspace"
)

// defaultTimeout bounds a command's wait for its session when the caller's
// context has no deadline.
const defaultTimeout = 10 * time.Second

// Runtime runs sessions: it owns (or borrows) an actor system, resolves
// models and tools, and keeps the registry of live sessions.
type Runtime struct {
	system    *actor.ActorSystem
	ownSystem bool
	// replies waits for the answers of the commands sent to sessions.
	replies  *replies.Pool
	env      *actors.Env
	registry *placement.Registry
	models   llm.Resolver
	catalog  *tools.Catalog
	mcp      *mcp.Manager
	// mcpGroups maps the id of each session that names tools as
	// "mcp:<server>" to those servers (mcpChanged).
	mcpGroups sync.Map
	plugins   *plugins.Registry
	timeout   time.Duration
	ids       atomic.Uint64
	// reach is how the runtime gets to its sessions: in this process, or
	// in others (WithSessionsElsewhere), when it hosts none.
	reach reach
	// policy is what each user may use and how much (WithPolicy); nil
	// allows everything.
	policy *policy.Policy
	// workspaces is where the sessions' tools work (WithWorkspaces).
	workspaces *workspace.Workspaces
	// admitting makes counting a user's sessions and adding one atomic
	// (admitSession).
	admitting sync.Mutex
	// agents are the named session templates (WithAgents).
	agents map[string]Agent
	// defaultAgent names the default of agents; "" for none.
	defaultAgent string
	// deletions are told of the sessions deleted (OnDelete).
	deletions deletions
}

// New returns a runtime made of DefaultConfig and opts. With no options
// it runs scripted models and the demo tools in an actor system of its
// own, logging nothing.
func New(opts ...Option) (*Runtime, error) {
	c := DefaultConfig()
	for _, o := range opts {
		o(&c)
	}
	return NewFromConfig(c)
}

// NewFromConfig returns a runtime made of c, once Validate finds nothing
// wrong with it.
func NewFromConfig(c Config) (*Runtime, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	own := append([]tools.Tool{builtin.Sleep(), builtin.SleepStubborn(), builtin.SleepImmune(), builtin.Echo()}, workspaceTools(&c)...)
	catalog, err := tools.NewCatalog(append(append(own, actors.SubagentTool(), builtin.TodoWrite()), c.Tools...)...)
	if err != nil {
		return nil, fmt.Errorf("tack: tools: %w", err)
	}
	if c.Plugins == nil {
		c.Plugins = plugins.NewRegistry()
	}
	for _, p := range c.named {
		if err := c.Plugins.Register(p.name, p.factory); err != nil {
			return nil, fmt.Errorf("tack: %w", err)
		}
	}
	models := llm.Chain(append(c.Models, script.NewResolver(c.ScriptDir))...)
	rt := &Runtime{
		policy:       c.Policy,
		workspaces:   c.Workspaces,
		system:       c.ActorSystem,
		models:       models,
		catalog:      catalog,
		mcp:          c.MCP,
		plugins:      c.Plugins,
		timeout:      c.RequestTimeout,
		agents:       c.Agents,
		defaultAgent: defaultAgent(c.Agents, c.DefaultAgent),
		env:          &actors.Env{Settings: c.Sessions, Logger: c.Logger, Models: models, Tools: catalog},
	}
	if rt.system == nil {
		rt.system = actors.NewSystem()
		rt.ownSystem = true
	}
	rt.replies = replies.New(rt.system)
	if c.Metrics != nil {
		rt.env.Metrics = c.Metrics
	}
	if c.Tracer != nil {
		rt.env.Tracer = c.Tracer
	}
	if c.Sessions.PassivateAfter > 0 && c.Sessions.Store == nil {
		// A quiet session then waits parked, as the memory store's
		// compact record, not as a live actor with its buffers
		// (WithPassivateAfter).
		rt.env.Park = memory.New()
	}
	if c.Policy != nil {
		rt.env.Runs = newRunCounter(c.Policy)
	}
	if c.Workspaces != nil {
		rt.env.Workspace = c.Workspaces
	}
	if rt.env.Store != nil && rt.env.Node == "" {
		rt.env.Node = defaultNode()
	}
	rt.registry = placement.New(rt.system, rt.env, placement.WithRespec(rt.respec),
		placement.WithChildRespec(rt.childSpec), placement.WithFailure(failure), placement.WithAdmit(rt.admitSession))
	rt.reach = newReach(rt, c.Elsewhere)
	if rt.mcp != nil {
		rt.mcp.OnToolsChanged(rt.mcpChanged)
	}
	return rt, nil
}

// Close stops every session and gives up their leases, then stops the
// actor system if the runtime made it, and the MCP servers (WithMCP).
// The store stays open: its owner closes it. A command still waiting for
// its session's answer, and any sent afterwards, fails at once with
// not_alive.
func (rt *Runtime) Close() {
	rt.registry.Shutdown()
	rt.replies.Close()
	if rt.ownSystem {
		rt.system.Shutdown()
	}
	if rt.mcp != nil {
		_ = rt.mcp.Close()
	}
}

// Loaded reports whether session id runs in this process.
func (rt *Runtime) Loaded(id string) bool { return rt.registry.Loaded(id) }

// Sessions lists the ids of the loaded sessions, sorted.
func (rt *Runtime) Sessions() []string { return rt.registry.IDs() }
