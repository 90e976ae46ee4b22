package tack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/policy"
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
	env       *actors.Env
	registry  *actors.Registry
	models    llm.Resolver
	catalog   *tools.Catalog
	mcp       *mcp.Manager
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
}

// New returns a runtime. With no options it runs scripted models and the
// demo tools in an actor system of its own, logging nothing.
func New(opts ...Option) (*Runtime, error) {
	c := &config{timeout: defaultTimeout, dir: "."}
	for _, o := range opts {
		o(c)
	}
	own := append([]tools.Tool{builtin.Sleep(), builtin.SleepStubborn(), builtin.SleepImmune(), builtin.Echo()}, workspaceTools(c)...)
	catalog, err := tools.NewCatalog(append(append(own, actors.SubagentTool(), builtin.TodoWrite()), c.tools...)...)
	if err != nil {
		return nil, fmt.Errorf("tack: tools: %w", err)
	}
	if c.plugins == nil {
		c.plugins = plugins.NewRegistry()
	}
	for _, p := range c.named {
		if err := c.plugins.Register(p.name, p.factory); err != nil {
			return nil, fmt.Errorf("tack: %w", err)
		}
	}
	if c.elsewhere != nil && c.store == nil {
		return nil, fmt.Errorf("tack: WithSessionsElsewhere needs WithStore: the store the sessions are kept in, for their owners and the list")
	}
	models := llm.Chain(append(c.models, script.NewResolver(c.dir))...)
	def, err := defaultAgent(c.agents, c.defaultAgent)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{
		policy:       c.policy,
		workspaces:   c.workspaces,
		system:       c.system,
		models:       models,
		catalog:      catalog,
		mcp:          c.mcp,
		plugins:      c.plugins,
		timeout:      c.timeout,
		agents:       c.agents,
		defaultAgent: def,
		env: &actors.Env{
			Logger: c.logger, Clock: c.clock, RingSize: c.ring,
			SteeringLimit: c.steering, PromptLimit: c.prompts, ToolGrace: c.grace,
			ApprovalTimeout: c.approval, PluginBudget: c.budget, Models: models, Tools: catalog,
			Store: c.store, Node: c.node, LeaseTTL: c.leaseTTL, LeaseWait: c.leaseWait, PassivateAfter: c.passive,
			MaxImageBytes: c.maxImage,
		},
	}
	if rt.system == nil {
		// protoactor's logs are discarded, and its dead-letter throttle
		// goroutine then lives only briefly after late reports to a
		// closed session.
		rt.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return slog.New(slog.DiscardHandler)
		}), actor.WithDeadLetterThrottleInterval(10*time.Millisecond))
		rt.ownSystem = true
	}
	if c.metrics != nil {
		rt.env.Metrics = c.metrics
	}
	if c.tracer != nil {
		rt.env.Tracer = c.tracer
	}
	if c.policy != nil {
		rt.env.Runs = newRunCounter(c.policy)
	}
	if c.store != nil && rt.env.Node == "" {
		rt.env.Node = defaultNode()
	}
	rt.registry = actors.NewRegistry(rt.system, rt.env, actors.WithRespec(rt.respec),
		actors.WithChildRespec(rt.childSpec), actors.WithFailure(failure))
	rt.reach = newReach(rt, c.elsewhere)
	if rt.mcp != nil {
		rt.mcp.OnToolsChanged(rt.mcpChanged)
	}
	return rt, nil
}

// Close stops every session and gives up their leases, then stops the
// actor system if the runtime made it, and the MCP servers (WithMCP).
// The store stays open: its owner closes it.
func (rt *Runtime) Close() {
	rt.registry.Shutdown()
	if rt.ownSystem {
		rt.system.Shutdown()
	}
	if rt.mcp != nil {
		_ = rt.mcp.Close()
	}
}

// ActorSystem returns the actor system the sessions run in.
func (rt *Runtime) ActorSystem() *actor.ActorSystem { return rt.system }

// SessionConfig describes a new session.
type SessionConfig struct {
	// ID names the session; empty generates one ("s-1", "s-2", ...).
	ID string
	// Model is `script:<path>` or a name the runtime's resolvers know; empty
	// means the configured default model.
	Model string
	// Script is an inline scripted model, used instead of Model's file.
	Script json.RawMessage
	// System is the system prompt.
	System string
	// Tools names the tools the model may call; scripted models bring the
	// demo tools along.
	Tools []string
	// Plugins configures the session's plugins by name (see WithPlugins).
	Plugins []plugins.Config
	// User is who the session belongs to: the HTTP server's caller, kept
	// with the stored session so that it survives restarts. Empty means
	// nobody in particular (tack rpc, tack chat).
	User string
	// Context bounds what each request carries and when the history is
	// compacted (docs/context.md); nil: no limit, no automatic compaction,
	// and a context overflow is an error.
	Context *llm.ContextConfig
	// Subagents configures the children the tool "subagent" starts
	// (docs/context.md); nil: the defaults (children get the session's
	// model, tools and plugins, and start no sub-agents of their own).
	Subagents *SubagentConfig
	// QueueMode is how prompts queued while the agent works reach the
	// model: events.QueueOneAtATime (also when empty: each its own turn)
	// or events.QueueAll (all of them in the next turn, as one user
	// message joined by blank lines). See docs/control.md.
	QueueMode events.QueueMode
	// Agent names the agent (WithAgents) whose template the session
	// starts from: each field above that is left empty (Model with Script,
	// a nil Tools, Plugins, Context or Subagents) is the agent's.
	Agent string
}

// SubagentConfig configures a session's sub-agents; its Depth is set by
// the runtime for the children it makes and is 0 for sessions made by
// Spawn.
type SubagentConfig = actors.SubagentConfig

// Spawn starts a session (and, with a store, records it first). An id
// the caller chooses must pass CheckID; one that names an existing session
// is bad_request and changes nothing of that session. With a policy
// (WithPolicy), naming what cfg.User is not granted is forbidden.
func (rt *Runtime) Spawn(cfg SessionConfig) (*Session, error) {
	cfg, err := rt.withAgent(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.ID != "" {
		if err := checkID("session", cfg.ID); err != nil {
			return nil, err
		}
	}
	return rt.reach.spawn(cfg)
}

// spawn makes the session in this process.
func (l local) spawn(cfg SessionConfig) (*Session, error) {
	rt := l.rt
	return l.create(context.Background(), cfg.ID, cfg, func(id string) (actors.Spec, error) {
		spec, err := rt.spec(id, cfg, refuse)
		if err == nil {
			spec.Stored = storedConfig(cfg, spec.Model.Name)
		}
		return spec, err
	})
}

// permitElsewhere checks cfg against its user's grant for a runtime whose
// sessions live elsewhere: the session's process resolves the
// configuration; the names are checked here, where the policy is.
func (rt *Runtime) permitElsewhere(cfg SessionConfig) error {
	g := rt.grant(cfg.User)
	if err := rt.permit(g, cfg); err != nil {
		return err
	}
	if err := permitTools(g, cfg.User, cfg.Tools, scripted(cfg.Model, cfg.Script)); err != nil {
		return err
	}
	if scripted(cfg.Model, cfg.Script) && !g.Tool("shell") {
		// The members have no policy: a scripted session would bring
		// shell there, and its sub-agents too.
		return forbidden(cfg.User, "a scripted session in a cluster (its members give it shell)")
	}
	return nil
}

// generatedTries bounds how many generated ids create tries: another
// process on the same store may take a generated id first.
const generatedTries = 8

// create makes the session id (generated when empty) of the spec that
// specOf resolves, with cfg's tools. The registry claims the id, its
// owner included, in one step: only when it has said yes does anything
// else here learn of the session.
func (l local) create(ctx context.Context, id string, cfg SessionConfig, specOf func(id string) (actors.Spec, error)) (*Session, error) {
	rt := l.rt
	release, err := rt.admitSession(cfg.User)
	if err != nil {
		return nil, err
	}
	defer release()
	generate := id == ""
	for try := 1; ; try++ {
		if generate {
			id = rt.newID()
		}
		spec, err := specOf(id)
		if err != nil {
			return nil, err
		}
		pid, err := rt.registry.Create(ctx, spec)
		if generate && try < generatedTries && errors.Is(err, actors.ErrSessionExists) {
			continue
		}
		if err != nil {
			return nil, registryError(id, err)
		}
		rt.noteGroups(id, cfg.Tools)
		return l.handle(id, pid), nil
	}
}

// spec resolves what a session is made of: its model, plugins and tools,
// within its owner's grant (mode says how what is not granted is taken).
func (rt *Runtime) spec(id string, cfg SessionConfig, mode check) (actors.Spec, error) {
	g := rt.grant(cfg.User)
	if mode == refuse {
		if err := rt.permit(g, cfg); err != nil {
			return actors.Spec{}, err
		}
	}
	model, err := rt.resolve(cfg.Model, cfg.Script)
	if cfg.Model == "" && len(cfg.Script) == 0 && Code(err) == events.CodeUnknownModel {
		return actors.Spec{}, &Error{Code: events.CodeBadRequest, Message: "a session needs a model or a script, and no default_model is configured"}
	}
	if err != nil {
		return actors.Spec{}, err
	}
	ps, err := rt.plugins.Build(cfg.Plugins)
	if err != nil {
		return actors.Spec{}, &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	names := cfg.Tools
	if mode == refuse {
		err = permitTools(g, cfg.User, cfg.Tools, scripted(cfg.Model, cfg.Script))
		if err == nil {
			err = permitTools(g, cfg.User, actors.PluginTools(ps), false)
		}
		if err != nil {
			return actors.Spec{}, err
		}
	} else {
		names = rt.granted(g, cfg)
	}
	if own := brought(g, model.ProvidesTools); len(own) != len(model.ProvidesTools) {
		m := *model // the resolver's model is not ours to change
		m.ProvidesTools = own
		model = &m
	}
	set, err := rt.toolSet(union(names, model.ProvidesTools), ps)
	if err != nil {
		return actors.Spec{}, err
	}
	if err := events.CheckQueueMode(cfg.QueueMode); err != nil {
		return actors.Spec{}, &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	spec := actors.Spec{ID: id, Model: model, System: cfg.System, Tools: set, Plugins: ps, Context: cfg.Context, Subagents: cfg.Subagents, QueueMode: cfg.QueueMode}
	if c := cfg.Subagents; c != nil {
		if err := c.Validate(); err != nil {
			return actors.Spec{}, &Error{Code: events.CodeBadRequest, Message: err.Error()}
		}
	}
	if c := cfg.Context; c != nil {
		if err := c.Validate(); err != nil {
			return actors.Spec{}, &Error{Code: events.CodeBadRequest, Message: err.Error()}
		}
		if c.CompactModel != "" {
			if spec.CompactModel, err = rt.resolve(c.CompactModel, nil); err != nil {
				return actors.Spec{}, err
			}
		}
	}
	return spec, nil
}

// toolSet resolves a session's tools by name and adds the tools its
// plugins bring; a name of a tool a plugin brings is that tool (a
// sub-agent's tools name those of its inherited plugins). Names of MCP
// tools go to the MCP servers (mcpTools); the session holds those tools
// as it holds its plugins' tools.
func (rt *Runtime) toolSet(names []string, ps []plugins.Plugin) (*tools.Set, error) {
	names, own, err := rt.mcpTools(names)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if tp, ok := p.(plugins.ToolProvider); ok {
			own = append(own, tp.Tools()...)
		}
	}
	for _, t := range own {
		names = append(names, t.Spec().Name)
	}
	set, err := actors.ToolSet(rt.catalog, names, own)
	switch {
	case errors.Is(err, tools.ErrUnknownTool):
		return nil, &Error{Code: events.CodeUnknownTool, Message: err.Error()}
	case err != nil:
		return nil, &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	return set, nil
}

// Session returns the session with id, restoring it from the store when
// it is stored but not loaded: whatever is done with a stored session
// first, it sees the session as it is once restored. A runtime whose
// sessions live elsewhere returns a handle at once; the session's
// process tells on the first command whether it exists.
func (rt *Runtime) Session(id string) (*Session, error) { return rt.reach.session(id) }

// session restores session id here if it is stored but not loaded.
func (l local) session(id string) (*Session, error) {
	pid, err := l.rt.registry.Get(context.Background(), id)
	if err != nil {
		return nil, registryError(id, err)
	}
	return l.handle(id, pid), nil
}

// handle returns the handle of session id, whose actor is pid.
func (l local) handle(id string, pid *actor.PID) *Session {
	if l.passivates {
		pid = nil // see Session.pid
	}
	return &Session{id: id, pid: pid, rt: l.rt}
}

// Loaded reports whether session id runs in this process.
func (rt *Runtime) Loaded(id string) bool { return rt.registry.Loaded(id) }

// Sessions lists the ids of the loaded sessions, sorted.
func (rt *Runtime) Sessions() []string { return rt.registry.IDs() }

// resolve finds a model by name or inline script: a name that resolves to
// nothing is unknown_model, a malformed inline script a bad_request.
func (rt *Runtime) resolve(name string, inline json.RawMessage) (*llm.Model, error) {
	m, err := rt.models.Resolve(name, inline)
	if errors.Is(err, llm.ErrUnknownModel) && len(inline) == 0 {
		return nil, &Error{Code: events.CodeUnknownModel, Message: err.Error()}
	}
	if err != nil {
		return nil, &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	return m, nil
}

// newID generates a session id no loaded or stored session has.
func (rt *Runtime) newID() string {
	for {
		id := "s-" + strconv.FormatUint(rt.ids.Add(1), 10)
		if _, taken := rt.registry.Lookup(id); taken {
			continue
		}
		if rt.env.Store != nil {
			if _, err := rt.env.Store.Get(context.Background(), id); err == nil {
				continue
			}
		}
		return id
	}
}

// union returns a followed by the names of b not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, n := range b {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Deliver hands msg — an events/v1 command the session actor takes, or an
// *actor.MessageEnvelope naming the sender its Reply goes to — to session
// id, in the order of the calls: at once when the session is loaded, else
// once it is restored (a stored session) or its passivation is over. A
// request that cannot reach its session is answered with a Reply whose
// error says why (invalid_session for an unknown id). It never blocks:
// remote callers' messages (package server/remote) come through here.
func (rt *Runtime) Deliver(id string, msg any) { rt.registry.Deliver(id, msg) }

// failure is the ErrorInfo of a request Deliver could not hand to id.
func failure(id string, err error) *eventsv1.ErrorInfo {
	var e *Error
	errors.As(registryError(id, err), &e)
	return &eventsv1.ErrorInfo{Code: e.Code, Message: e.Message}
}

// requestID sends a command to session id through Deliver and waits for
// its reply: what a Session's commands do when sessions may be passivated.
func (rt *Runtime) requestID(ctx context.Context, id string, msg any) (*eventsv1.Reply, error) {
	f := actor.NewFuture(rt.system, rt.timeoutFor(ctx))
	rt.registry.Deliver(id, &actor.MessageEnvelope{Message: msg, Sender: f.PID()})
	return rt.answer(f.Result())
}

// request sends a command to a session actor and waits for its reply.
func (rt *Runtime) request(ctx context.Context, pid *actor.PID, msg any) (*eventsv1.Reply, error) {
	return rt.answer(rt.system.Root.RequestFuture(pid, msg, rt.timeoutFor(ctx)).Result())
}

// timeoutFor is how long a request made under ctx waits for its session's
// answer: what is left of ctx's deadline, else the runtime's request
// timeout. A deadline already past leaves a nanosecond: a negative
// duration would make protoactor's future wait with no timeout at all,
// forever if the answer never comes (a reply held for a write to a store
// that hangs).
func (rt *Runtime) timeoutFor(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Nanosecond)
	}
	return rt.timeout
}

// answer is the Reply of a request, or the error it carries.
func (rt *Runtime) answer(res any, err error) (*eventsv1.Reply, error) {
	if err != nil {
		return nil, &Error{Code: events.CodeNotAlive, Message: fmt.Sprintf("session did not answer: %v", err)}
	}
	reply, ok := res.(*eventsv1.Reply)
	if !ok {
		return nil, &Error{Code: events.CodeInternal, Message: fmt.Sprintf("unexpected reply %T", res)}
	}
	return reply, errorFrom(reply.Error)
}
