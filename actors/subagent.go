package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
)

// Sub-agents: the tool `subagent` starts a child session, <parent>/sub-N,
// with a history of its own and the task as its first prompt. The call
// runs on a goroutine like any tool; the child's events come back to the
// parent through a sink, which the parent tells wrapped in
// sub_agent_event between subagent_start and subagent_end. The child's
// final assistant text is the call's result.

// SubagentToolName is the name of the tool that starts sub-agents.
const SubagentToolName = "subagent"

const subagentSchema = `{
  "type": "object",
  "properties": {
    "task": {"type": "string", "description": "What the sub-agent is to do: its first prompt. It sees nothing else of this conversation, so say everything it needs."},
    "description": {"type": "string", "description": "A few words on what the sub-agent does, for the people watching."},
    "tools": {"type": "array", "items": {"type": "string"}, "description": "The tools the sub-agent may call (default: every tool it may have)."},
    "model": {"type": "string", "description": "The model the sub-agent runs on (default: the configured one)."}
  },
  "required": ["task"],
  "additionalProperties": false
}`

// subagentTool is the tool `subagent`. A session runs its calls itself
// (it starts a child session in its registry); Run is only reached when
// the tool is run outside a session.
type subagentTool struct{}

// SubagentTool returns the killable tool `subagent`, which hands a task to
// a child session and answers with the child's final text. Only sessions
// that name it in their tools have it: it spends model calls.
func SubagentTool() tools.Tool { return subagentTool{} }

func (subagentTool) Spec() tools.Spec {
	return tools.Spec{
		Name:        SubagentToolName,
		Description: "Hand a self-contained task to a sub-agent: a new session with a context of its own. Answers with the sub-agent's final text.",
		Schema:      json.RawMessage(subagentSchema),
		Kind:        tools.Killable,
	}
}

func (subagentTool) Run(context.Context, json.RawMessage, func(string)) (string, error) {
	return "", errors.New("the subagent tool runs only inside a session")
}

// subagentArgs are a subagent call's arguments.
type subagentArgs struct {
	Task        string   `json:"task"`
	Description string   `json:"description"`
	Tools       []string `json:"tools"`
	Model       string   `json:"model"`
}

// subagentCall is what a call of the subagent tool knows of its child.
type subagentCall struct {
	child       string
	description string
	// started is set once subagent_start was told.
	started bool
	// halt asks the child to stop after its running tools: the parent's
	// abort with kill_tools none, which leaves the call running.
	halt func()
}

// subagentStarted says a call's child session exists and is about to
// take its task.
type subagentStarted struct {
	tag   tag
	index int
	child string
}

// childEvent is an event of a call's child session.
type childEvent struct {
	tag   tag
	index int
	child string
	ev    *eventsv1.Event
}

// errKillAll is the cause a subagent call is cancelled with when the
// parent's abort said kill_tools all: the child is aborted alike.
var errKillAll = errors.New("aborted with kill_tools all")

// launchSubagent starts a subagent call: the child's configuration is
// worked out here, from the session's own, and the child is made and run
// on a goroutine. A call that cannot start (bad tools, too deep) fails
// like any tool, through toolDone.
func (s *session) launchSubagent(c *call) {
	s.run.batch.pending++
	var a subagentArgs
	_ = json.Unmarshal(c.args, &a) // the schema was checked
	cfg, err := s.childConfig(a)
	if err != nil {
		s.home.post(&toolDone{tag: s.run.tag(), index: c.index, result: tools.Result{Content: err.Error(), IsError: true}, ended: s.home.env.now()})
		return
	}
	s.notes.ids.Subagents++
	s.touch()
	id := s.spec.ID + "/sub-" + strconv.FormatUint(s.notes.ids.Subagents, 10)
	halt := make(chan struct{})
	c.sub = &subagentCall{child: id, description: a.Description, halt: sync.OnceFunc(func() { close(halt) })}
	ctx, cancel := context.WithCancelCause(s.run.ctx)
	r := s.run
	c.cancel = func() {
		var cause error
		if r.killTools == events.KillAll {
			cause = errKillAll
		}
		cancel(cause)
	}
	j := &subagentJob{home: s.home, tag: s.run.tag(), index: c.index,
		id: id, cfg: cfg, task: a.Task, now: s.home.env.now, persisted: s.home.env.Store != nil, halt: halt}
	go j.run(ctx)
}

// childConfig is the configuration of a child for a call's arguments:
// the parent's, with the call's model (or the options' or the parent's),
// the call's tools (or all those allowed), the parent's plugins unless the
// options say not, and the depth one more.
func (s *session) childConfig(a subagentArgs) (spec.Session, error) {
	opts := spec.Subagents{}
	if s.spec.Stored.Subagents != nil {
		opts = *s.spec.Stored.Subagents
	}
	depth := opts.Depth + 1
	if depth > opts.Nesting() {
		return spec.Session{}, fmt.Errorf("sub-agents nest at most %d deep, and this session is at depth %d", opts.Nesting(), opts.Depth)
	}
	nests := depth < opts.Nesting()
	allowed := opts.Tools
	if allowed == nil {
		allowed = s.spec.Tools.Names()
		if !opts.Inherits() {
			allowed = slices.DeleteFunc(allowed, func(n string) bool { return slices.Contains(PluginTools(s.spec.Plugins), n) })
		}
	}
	names := a.Tools
	if names == nil {
		names = slices.DeleteFunc(slices.Clone(allowed), func(n string) bool { return n == SubagentToolName && !nests })
	}
	for _, n := range names {
		switch {
		case !slices.Contains(allowed, n):
			return spec.Session{}, fmt.Errorf("unknown tool %q for a sub-agent; it may have: %s", n, strings.Join(allowed, ", "))
		case n == SubagentToolName && !nests:
			return spec.Session{}, fmt.Errorf("a sub-agent at depth %d may not start sub-agents: they nest at most %d deep", depth, opts.Nesting())
		}
	}
	parent := s.spec.Stored
	child := opts
	child.Depth = depth
	cfg := spec.Session{Model: parent.Model, Script: parent.Script, System: parent.System, Tools: slices.Clone(names),
		Context: parent.Context, User: parent.User, Subagents: &child}
	if m := cmp(a.Model, opts.Model); m != "" {
		cfg.Model, cfg.Script = m, nil
	}
	if opts.Inherits() {
		cfg.Plugins = parent.Plugins
	}
	return cfg, nil
}

// cmp is the first of a and b that is not empty.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// PluginTools names the tools plugins bring.
func PluginTools(ps []plugins.Plugin) []string {
	var out []string
	for _, p := range ps {
		if tp, ok := p.(plugins.ToolProvider); ok {
			for _, t := range tp.Tools() {
				out = append(out, t.Spec().Name)
			}
		}
	}
	return out
}

// subagentStarted tells subagent_start for a call still waiting for its
// child.
func (s *session) subagentStarted(m *subagentStarted) {
	if c := s.subagentCall(m.tag, m.index, m.child); c != nil {
		c.sub.started = true
		s.emit(&eventsv1.SubagentStart{ChildSession: m.child, Description: c.sub.description})
	}
}

// childEvent counts a child's usage into the session's totals (also when
// its call is settled already: the tokens were spent) and tells the event
// wrapped in sub_agent_event while the call waits for the child.
func (s *session) childEvent(m *childEvent) {
	if end := m.ev.GetAgentEnd(); end != nil {
		u := tallyOf(end.GetUsage())
		spent := s.notes.spending()
		spent.total.merge(u)
		spent.sub.merge(u)
		spent.subRan = true
		s.touch()
	}
	if c := s.subagentCall(m.tag, m.index, m.child); c != nil && c.sub.started {
		s.emit(&eventsv1.SubAgentEvent{CallId: c.tc.Id, ChildSession: m.child, Event: m.ev})
	}
}

// subagentCall is the running call of the current turn that child works
// for, or nil.
func (s *session) subagentCall(t tag, index int, child string) *call {
	if !s.current(t) || s.run.batch == nil {
		return nil
	}
	c := s.run.batch.calls[index]
	if !c.running() || c.sub == nil || c.sub.child != child {
		return nil
	}
	return c
}

// endSubagent tells subagent_end for a call whose child was told started,
// with the call's result.
func (s *session) endSubagent(c *call, result string) {
	if c.sub != nil && c.sub.started {
		s.emit(&eventsv1.SubagentEnd{ChildSession: c.sub.child, Result: result})
		c.sub.started = false
	}
}
