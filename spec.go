package tack

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
)

// SessionConfig describes a new session (package spec says what each
// field means).
type SessionConfig = spec.Session

// SubagentConfig configures a session's sub-agents; its Depth is set by
// the runtime for the children it makes and is 0 for sessions made by
// Spawn.
type SubagentConfig = spec.Subagents

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
func (l *local) spawn(cfg SessionConfig) (*Session, error) {
	rt := l.rt
	return l.create(context.Background(), cfg.ID, cfg, func(id string) (actors.Spec, error) {
		spec, err := rt.spec(id, cfg, refuse)
		if err == nil {
			spec.Parked = rt.parksNew(cfg.User) && !spec.StaysLoaded
		}
		return spec, err
	})
}

// parksNew reports whether a session Spawn makes for user starts parked:
// in a runtime that parks its quiet sessions (WithPassivateAfter without
// a store), a new session is a compact record until its first command
// starts it. One whose user has a max_sessions bound starts loaded: the
// bound counts the sessions loaded, and a parked one would escape it.
func (rt *Runtime) parksNew(user string) bool {
	return rt.env.Park != nil && (user == "" || rt.policy.Limit(user).MaxSessions == 0)
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

// stored is the configuration session id keeps, as spec.FromStored gives
// it back: cfg with its model named as it resolved (agent templates were
// applied already; the agent's name stays, for Session.Agent).
func stored(id string, cfg SessionConfig, model string) *SessionConfig {
	cfg.ID, cfg.Model = id, model
	return &cfg
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
	if err != nil {
		return actors.Spec{}, err
	}
	ps, err := rt.plugins.Build(cfg.Plugins)
	if err != nil {
		return actors.Spec{}, &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	names, pluginOwn := cfg.Tools, pluginTools(ps)
	if mode == refuse {
		if err := permitToolsOf(g, cfg, ps); err != nil {
			return actors.Spec{}, err
		}
	} else if g != nil {
		names = rt.granted(g, cfg)
		pluginOwn = slices.DeleteFunc(pluginOwn, func(t tools.Tool) bool { return !rt.keepsTool(g, cfg, t.Spec().Name, false) })
	}
	if own := brought(g, model.ProvidesTools); len(own) != len(model.ProvidesTools) {
		m := *model // the resolver's model is not ours to change
		m.ProvidesTools = own
		model = &m
	}
	set, err := rt.toolSet(union(names, model.ProvidesTools), pluginOwn)
	if err != nil {
		return actors.Spec{}, err
	}
	if err := cfg.Validate(); err != nil {
		return actors.Spec{}, &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	spec := actors.Spec{ID: id, Model: model, Tools: set, Plugins: ps, Stored: stored(id, cfg, model.Name),
		StaysLoaded: rt.env.StaysLoaded(model, cfg.Model, cfg.Script)}
	if c := cfg.Context; c != nil {
		if c.CompactModel != "" {
			if spec.CompactModel, err = rt.resolve(c.CompactModel, nil); err != nil {
				return actors.Spec{}, err
			}
		}
	}
	return spec, nil
}

// toolSet resolves a session's tools by name and adds the tools its
// plugins bring (brought); a name of a tool a plugin brings is that tool
// (a sub-agent's tools name those of its inherited plugins). Names of MCP
// tools go to the MCP servers (mcpTools); the session holds those tools
// as it holds its plugins' tools.
func (rt *Runtime) toolSet(names []string, brought []tools.Tool) (*tools.Set, error) {
	names, own, err := rt.mcpTools(names)
	if err != nil {
		return nil, err
	}
	own = append(own, brought...)
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

// pluginTools are the tools plugins ps bring.
func pluginTools(ps []plugins.Plugin) []tools.Tool {
	var out []tools.Tool
	for _, p := range ps {
		if tp, ok := p.(plugins.ToolProvider); ok {
			out = append(out, tp.Tools()...)
		}
	}
	return out
}

// resolve finds a model by name or inline script: a name that resolves to
// nothing is unknown_model, a malformed inline script a bad_request.
func (rt *Runtime) resolve(name string, inline json.RawMessage) (*llm.Model, error) {
	m, err := rt.models.Resolve(name, inline)
	var unknown *llm.UnknownModelError
	switch {
	case err == nil:
		return m, nil
	case name == "" && len(inline) == 0 && errors.As(err, &unknown) && unknown.Name == "":
		// No resolver put a default model in for the empty name; one that
		// did names it, and why it could not be had.
		return nil, &Error{Code: events.CodeBadRequest, Message: "a session needs a model or a script, and no default_model is configured"}
	case errors.Is(err, llm.ErrUnknownModel) && len(inline) == 0:
		return nil, &Error{Code: events.CodeUnknownModel, Message: err.Error()}
	}
	return nil, &Error{Code: events.CodeBadRequest, Message: err.Error()}
}

// newID generates a session id no loaded or stored session has.
func (rt *Runtime) newID() string {
	for {
		id := "s-" + strconv.FormatUint(rt.ids.Add(1), 10)
		if _, taken := rt.registry.Lookup(id); taken {
			continue
		}
		if st := rt.env.Unloaded(); st != nil {
			if _, err := st.Get(context.Background(), id); err == nil {
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
