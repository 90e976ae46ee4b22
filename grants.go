package tack

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/policy"
)

// What a session may use is its owner's grant (WithPolicy); every name a
// session is given — its model, tools, plugins' tools, sub-agent options,
// compaction model, a switch_model, an attach_tools, a sub-agent call's
// tools and model — is checked here, whatever the transport, so that
// HTTP, WebSocket, AG-UI and remote callers meet the same rule.

// alwaysBrought are the tools a scripted model brings whatever its
// owner's grant: demo tools that touch nothing (shell is not one).
var alwaysBrought = []string{"sleep", "sleep_stubborn", "sleep_immune", "echo"}

// WithPolicy makes what each session may use, and how many sessions and
// runs its owner may have, depend on the owner (SessionConfig.User):
// naming a model or tool the owner's grant leaves out is forbidden, and
// a scripted model brings only the demo tools the grant allows (sleep,
// sleep_stubborn, sleep_immune and echo always, shell when granted).
// Without it (the default, nil) everything is allowed and nothing is
// limited: one local user.
func WithPolicy(p *policy.Policy) Option { return func(c *Config) { c.Policy = p } }

// check says how spec treats what a configuration names that its owner's
// grant leaves out.
type check int

const (
	// refuse: a new session (create_session, a sub-agent) is forbidden.
	refuse check = iota
	// drop: a session restored or forked keeps what it was made with,
	// less the tools no longer granted (the grant may have changed).
	drop
)

// grant is what user's sessions may use; nil allows everything.
func (rt *Runtime) grant(user string) *policy.Grant {
	if rt.policy == nil {
		return nil
	}
	return rt.policy.Grant(user)
}

// forbidden is the error of naming what is not granted.
func forbidden(user, format string, args ...any) error {
	return &Error{Code: events.CodeForbidden, Message: fmt.Sprintf(format, args...) + " is not granted to " + user}
}

// scripted reports whether a session named model (with inline, an
// inline script) plays a script.
func scripted(model string, inline []byte) bool {
	return len(inline) > 0 || strings.HasPrefix(model, script.Prefix)
}

// permitModel answers forbidden when g leaves out the model asked for
// as name (and inline). A scripted model needs scripts; a configured one
// is matched by the name asked for and by its full name
// ("provider/model"), which is known when it resolves here.
func (rt *Runtime) permitModel(g *policy.Grant, user, name string, inline []byte) error {
	if g == nil {
		return nil
	}
	if scripted(name, inline) {
		if !g.Scripts() {
			if len(inline) > 0 {
				return forbidden(user, "an inline script")
			}
			return forbidden(user, "the scripted model %q", name)
		}
		return nil
	}
	if name != "" && g.Model(name) {
		return nil
	}
	m, err := rt.models.Resolve(name, nil)
	switch {
	case err == nil && g.Model(m.Name):
		return nil
	case err != nil && name == "":
		return nil // no default model: spec says so
	case err == nil:
		name = m.Name
	}
	return forbidden(user, "the model %q", name)
}

// permitToolsOf answers forbidden when g leaves out a tool a session of
// cfg, with plugins ps, would hold: configured, or brought by a plugin.
func permitToolsOf(g *policy.Grant, cfg SessionConfig, ps []plugins.Plugin) error {
	if err := permitTools(g, cfg.User, cfg.Tools, scripted(cfg.Model, cfg.Script)); err != nil {
		return err
	}
	return permitTools(g, cfg.User, actors.PluginTools(ps), false)
}

// permitTools answers forbidden naming the first of names g leaves out;
// with scripted, the demo tools a scripted model brings pass.
func permitTools(g *policy.Grant, user string, names []string, scripted bool) error {
	for _, n := range names {
		if !g.Tool(n) && !(scripted && slices.Contains(alwaysBrought, n)) {
			return forbidden(user, "the tool %q", n)
		}
	}
	return nil
}

// permit checks what cfg names besides its tools — its model, sub-agent
// options and compaction model — against g.
func (rt *Runtime) permit(g *policy.Grant, cfg SessionConfig) error {
	if g == nil {
		return nil
	}
	if err := rt.permitModel(g, cfg.User, cfg.Model, cfg.Script); err != nil {
		return err
	}
	if c := cfg.Subagents; c != nil {
		if c.Model != "" {
			if err := rt.permitModel(g, cfg.User, c.Model, nil); err != nil {
				return err
			}
		}
		if err := permitTools(g, cfg.User, c.Tools, scripted(cfg.Model, cfg.Script)); err != nil {
			return err
		}
	}
	if c := cfg.Context; c != nil && c.CompactModel != "" {
		return rt.permitModel(g, cfg.User, c.CompactModel, nil)
	}
	return nil
}

// brought is what of a model's own tools g lets a session have.
func brought(g *policy.Grant, provided []string) []string {
	if g == nil {
		return provided
	}
	return slices.DeleteFunc(slices.Clone(provided), func(n string) bool {
		return !slices.Contains(alwaysBrought, n) && !g.Tool(n)
	})
}

// granted is what of a restored session's tools g still grants; what it
// no longer does is logged and left out.
func (rt *Runtime) granted(g *policy.Grant, cfg SessionConfig) []string {
	if g == nil {
		return cfg.Tools
	}
	return slices.DeleteFunc(slices.Clone(cfg.Tools), func(n string) bool { return !rt.keepsTool(g, cfg, n, scripted(cfg.Model, cfg.Script)) })
}

// keepsTool reports whether a restored or forked session of cfg keeps
// tool n under its owner's grant g, and logs a tool it loses: a scripted
// session keeps the demo tools its model brings.
func (rt *Runtime) keepsTool(g *policy.Grant, cfg SessionConfig, n string, scripted bool) bool {
	if permitTools(g, cfg.User, []string{n}, scripted) == nil {
		return true
	}
	if l := rt.env.Logger; l != nil {
		l.Warn("a restored session loses a tool its owner is no longer granted",
			zap.String("session", cfg.ID), zap.String("user", cfg.User), zap.String("tool", n))
	}
	return false
}

// childSpec resolves a sub-agent's configuration, as a new session of
// its parent's owner: what that owner's grant leaves out fails the
// subagent call (its result says so).
func (rt *Runtime) childSpec(id string, cfg SessionConfig) (actors.Spec, error) {
	return rt.storedSpec(id, cfg, refuse)
}

// permitCommand answers forbidden when cmd, sent to session id, names a
// tool or model its owner's grant leaves out: attach_tools and
// switch_model.
func (rt *Runtime) permitCommand(ctx context.Context, id string, cmd any) error {
	if rt.policy == nil {
		return nil
	}
	var names []string
	var model string
	switch m := cmd.(type) {
	case *eventsv1.AttachTools:
		names = m.Names
	case *eventsv1.SwitchModel:
		model = m.Model
	default:
		return nil
	}
	user, err := rt.User(ctx, id)
	if err != nil {
		return err
	}
	g := rt.grant(user)
	if model != "" {
		return rt.permitModel(g, user, model, nil)
	}
	return permitTools(g, user, names, false)
}
