package actors

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
)

// A session's tools are the tools of the runtime's catalog it names
// (Spec.Stored.Tools, with the demo tools a scripted model brings) and
// the tools its plugins bring. attach_tools and detach_tools change them
// in any state; the next request, in the current run too, offers the new
// set, and a call to a tool no longer there gets tool_call_unknown.

// ToolSet returns the Set of the named tools: a tool of own (the tools a
// session's plugins bring) by its name, any other from catalog (nil holds
// none). Names neither holds give an error wrapping tools.ErrUnknownTool
// that names them; a tool of own that the catalog has too, an error that
// says so.
func ToolSet(catalog *tools.Catalog, names []string, own []tools.Tool) (*tools.Set, error) {
	var fromCatalog []string
	var mine []tools.Tool
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			continue
		}
		if j := slices.IndexFunc(own, func(t tools.Tool) bool { return t.Spec().Name == n }); j >= 0 {
			mine = append(mine, own[j])
			continue
		}
		fromCatalog = append(fromCatalog, n)
	}
	var set *tools.Set
	if catalog != nil {
		for _, t := range mine {
			if _, dup := catalog.All().Get(t.Spec().Name); dup {
				return nil, fmt.Errorf("tools: duplicate tool name %q: a plugin brings a tool the runtime has", t.Spec().Name)
			}
		}
		var err error
		if set, err = catalog.Resolve(fromCatalog); err != nil {
			return nil, err
		}
	} else if len(fromCatalog) > 0 {
		return nil, fmt.Errorf("%w %s", tools.ErrUnknownTool, quoteAll(fromCatalog))
	}
	if len(mine) == 0 {
		return set, nil
	}
	return set.With(mine...)
}

// changeTools attaches (or detaches) the named tools: it answers {} and
// tells tools_updated with the names that changed, or fails with
// unknown_tool naming every name it cannot attach (or that the session
// does not have), changing nothing.
func (s *session) changeTools(ctx actor.Context, names []string, attach bool) {
	cmd := "detach_tools"
	if attach {
		cmd = "attach_tools"
	}
	if len(names) == 0 {
		s.fail(ctx, events.CodeBadRequest, cmd+` needs at least one name in "names"`)
		return
	}
	own := s.ownTools()
	var changed, unknown []string
	for i, n := range names {
		has := s.has(n)
		switch {
		case slices.Contains(names[:i], n): // a name given twice counts once
		case !has && (!attach || !s.known(n, own)):
			unknown = append(unknown, n)
		case attach != has:
			changed = append(changed, n)
		}
	}
	if len(unknown) > 0 {
		what := "unknown tool"
		if !attach {
			what = "the session has no tool"
		}
		s.fail(ctx, events.CodeUnknownTool, fmt.Sprintf("%s %s; nothing was changed", what, quoteAll(unknown)))
		return
	}
	update := &eventsv1.ToolsUpdated{Attached: []string{}, Detached: []string{}}
	if len(changed) > 0 {
		now := s.spec.Tools.Names()
		if attach {
			now, update.Attached = append(now, changed...), changed
		} else {
			now, update.Detached = slices.DeleteFunc(now, func(n string) bool { return slices.Contains(changed, n) }), changed
		}
		if err := s.setTools(now, own); err != nil {
			s.fail(ctx, events.CodeInternal, err.Error())
			return
		}
	}
	s.emit(update)
	s.reply(ctx, &eventsv1.Reply{})
}

// has reports whether the session has the tool called name.
func (s *session) has(name string) bool {
	_, ok := s.spec.Tools.Get(name)
	return ok
}

// ownTools are the session's tools that are not the catalog's: its
// plugins' tools, and any tool it was spawned with that the catalog does
// not hold (an embedder's Spec), which it keeps until detached.
func (s *session) ownTools() []tools.Tool {
	own := s.hooks.chain.Tools()
	for _, n := range s.spec.Tools.Names() {
		if _, ok := catalogTools(s.home.env).Get(n); ok || slices.ContainsFunc(own, func(t tools.Tool) bool { return t.Spec().Name == n }) {
			continue
		}
		t, _ := s.spec.Tools.Get(n)
		own = append(own, t)
	}
	return own
}

// known reports whether a tool called name can be attached: the catalog
// or the session's plugins have it.
func (s *session) known(name string, own []tools.Tool) bool {
	if _, ok := catalogTools(s.home.env).Get(name); ok {
		return true
	}
	return slices.ContainsFunc(own, func(t tools.Tool) bool { return t.Spec().Name == name })
}

// setTools makes names the session's tools, and what the store keeps of
// them: the catalog's names in the configuration, and the tools the
// session brings without naming them (a scripted model's demo tools, its
// plugins') that are not among names as detached, so that a restore
// leaves them out.
func (s *session) setTools(names []string, own []tools.Tool) error {
	set, err := ToolSet(s.home.env.Tools, names, own)
	if err != nil {
		return err
	}
	s.spec.Tools = set
	brought := slices.Clone(s.spec.Model.ProvidesTools)
	var configured []string
	for _, t := range own {
		brought = append(brought, t.Spec().Name)
	}
	for _, n := range set.Names() {
		// "<server>/<tool>" names an MCP tool, which the runtime resolves
		// by name again on a restore.
		if strings.Contains(n, "/") || !slices.ContainsFunc(own, func(t tools.Tool) bool { return t.Spec().Name == n }) {
			configured = append(configured, n)
		}
	}
	// Names that are no tool's ("mcp:<server>") stand for groups the
	// runtime expands; they stay, in place of the tools of theirs
	// ("<server>/..."), and what was detached of them is taken out again
	// after a restore (detached).
	for _, g := range s.spec.Stored.Tools {
		if tools.ValidName(g) {
			continue
		}
		_, group, _ := strings.Cut(g, ":")
		configured = slices.DeleteFunc(configured, func(n string) bool { return strings.HasPrefix(n, group+"/") })
		configured = append(configured, g)
	}
	s.reconfigure(func(c *spec.Session) { c.Tools = configured })
	s.notes.detached = slices.DeleteFunc(slices.Sorted(slices.Values(brought)), func(n string) bool { return slices.Contains(names, n) })
	s.notes.detached = slices.Compact(s.notes.detached)
	s.p.switched = true
	s.touch()
	return nil
}

// restoreDetached takes the tools detached before a restart out of the
// tool set the configuration rebuilt.
func (s *session) restoreDetached(detached []string) {
	if len(detached) == 0 {
		return
	}
	s.notes.detached = detached
	names := slices.DeleteFunc(s.spec.Tools.Names(), func(n string) bool { return slices.Contains(detached, n) })
	set, err := ToolSet(s.home.env.Tools, names, s.ownTools())
	if err != nil {
		s.home.env.logger().Sugar().Errorw("the stored tool set could not be rebuilt; the session keeps its configured tools",
			"session", s.spec.ID, "error", err)
		return
	}
	s.spec.Tools = set
}

// notAttached is the result of a call whose tool was detached while the
// call waited to run (for an approval).
func notAttached(name string) string {
	return fmt.Sprintf("tool %q was detached before the call could run", name)
}

// catalogTools is the Set of every tool of the runtime's catalog; nil
// (empty) without one.
func catalogTools(e *Env) *tools.Set {
	if e.Tools == nil {
		return nil
	}
	return e.Tools.All()
}

// quoteAll quotes names and joins them with commas.
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// ReplaceTools replaces the session's tools whose names start with Prefix
// by Tools, in any state, from the next request on: what the runtime
// sends when an MCP server's tool list changes (Prefix "<server>/"). It
// tells tools_updated with the names that came and went, when any did,
// and answers nothing. The stored configuration is kept as it is: it
// names the group ("mcp:<server>"), which a restore expands again.
type ReplaceTools struct {
	Prefix string
	Tools  []tools.Tool
}

// replaceTools handles ReplaceTools.
func (s *session) replaceTools(m *ReplaceTools) {
	mine := func(n string) bool { return strings.HasPrefix(n, m.Prefix) }
	before := slices.DeleteFunc(s.spec.Tools.Names(), func(n string) bool { return !mine(n) })
	names := slices.DeleteFunc(s.spec.Tools.Names(), mine)
	own := slices.DeleteFunc(s.ownTools(), func(t tools.Tool) bool { return mine(t.Spec().Name) })
	// Tools the session detached stay detached.
	wasDetached := slices.Clone(s.notes.detached)
	var after []string
	var kept []tools.Tool
	for _, t := range m.Tools {
		if n := t.Spec().Name; !slices.Contains(wasDetached, n) {
			after, kept = append(after, n), append(kept, t)
		}
	}
	stored := s.spec.Stored.Tools
	if err := s.setTools(append(names, after...), append(own, kept...)); err != nil {
		s.home.env.logger().Sugar().Errorw("a changed MCP tool list could not be applied; the session keeps its tools",
			"session", s.spec.ID, "error", err)
		return
	}
	s.reconfigure(func(c *spec.Session) { c.Tools = stored })
	for _, n := range wasDetached {
		if mine(n) && !slices.Contains(s.notes.detached, n) {
			s.notes.detached = append(s.notes.detached, n)
		}
	}
	slices.Sort(s.notes.detached)
	update := &eventsv1.ToolsUpdated{Attached: []string{}, Detached: []string{}}
	for _, n := range after {
		if !slices.Contains(before, n) {
			update.Attached = append(update.Attached, n)
		}
	}
	for _, n := range before {
		if !slices.Contains(after, n) {
			update.Detached = append(update.Detached, n)
		}
	}
	if len(update.Attached)+len(update.Detached) > 0 {
		s.emit(update)
	}
}
