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
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/store"
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

// DefaultMaxDepth is how deep sub-agents nest when a session's options
// say nothing: its children start none.
const DefaultMaxDepth = 1

// SubagentConfig configures the children a session's subagent tool
// starts, and tells how deep the session itself sits. The store keeps it
// as JSON with the session (store.Config.Subagents).
type SubagentConfig struct {
	// MaxDepth is how deep sub-agents may nest: a session at depth d
	// starts children while d < MaxDepth. Nil means DefaultMaxDepth.
	MaxDepth *int `json:"max_depth,omitempty"`
	// Model is the children's model when a call names none; "" means the
	// parent's.
	Model string `json:"model,omitempty"`
	// Tools are the tools a child may have; nil means the parent's.
	Tools []string `json:"tools,omitempty"`
	// InheritPlugins says whether children get the parent's plugins; nil
	// means they do.
	InheritPlugins *bool `json:"inherit_plugins,omitempty"`
	// Depth is the session's own depth: 0 for a session a user made, one
	// more for each level of sub-agent. The runtime sets it for children.
	Depth int `json:"depth,omitempty"`
}

// Validate reports options no session can have.
func (c *SubagentConfig) Validate() error {
	if c.MaxDepth != nil && *c.MaxDepth < 0 {
		return fmt.Errorf("subagents.max_depth must not be negative, not %d", *c.MaxDepth)
	}
	return nil
}

func (c *SubagentConfig) maxDepth() int {
	if c.MaxDepth == nil {
		return DefaultMaxDepth
	}
	return *c.MaxDepth
}

func (c *SubagentConfig) inheritPlugins() bool {
	return c.InheritPlugins == nil || *c.InheritPlugins
}

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
		s.home.post(&toolDone{tag: s.run.tag(), index: c.index, result: tools.Result{Content: err.Error(), IsError: true}, ended: s.env.now()})
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
	j := &subagentJob{reg: s.home.reg, root: s.home.root, parent: s.home.self, tag: s.run.tag(), index: c.index,
		id: id, cfg: cfg, task: a.Task, now: s.env.now, persisted: s.env.Store != nil, halt: halt}
	go j.run(ctx)
}

// childConfig is the stored configuration of a child for a call's
// arguments: the parent's, with the call's model (or the options' or the
// parent's), the call's tools (or all those allowed), the parent's
// plugins unless the options say not, and the depth one more.
func (s *session) childConfig(a subagentArgs) (store.Config, error) {
	opts := SubagentConfig{}
	if s.spec.Subagents != nil {
		opts = *s.spec.Subagents
	}
	depth := opts.Depth + 1
	if depth > opts.maxDepth() {
		return store.Config{}, fmt.Errorf("sub-agents nest at most %d deep, and this session is at depth %d", opts.maxDepth(), opts.Depth)
	}
	nests := depth < opts.maxDepth()
	allowed := opts.Tools
	if allowed == nil {
		allowed = s.spec.Tools.Names()
		if !opts.inheritPlugins() {
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
			return store.Config{}, fmt.Errorf("unknown tool %q for a sub-agent; it may have: %s", n, strings.Join(allowed, ", "))
		case n == SubagentToolName && !nests:
			return store.Config{}, fmt.Errorf("a sub-agent at depth %d may not start sub-agents: they nest at most %d deep", depth, opts.maxDepth())
		}
	}
	parent := s.spec.Stored
	cfg := store.Config{Model: parent.Model, Script: parent.Script, System: parent.System, Tools: slices.Clone(names),
		Context: parent.Context, User: parent.User}
	if m := cmp(a.Model, opts.Model); m != "" {
		cfg.Model, cfg.Script = m, nil
	}
	if opts.inheritPlugins() {
		cfg.Plugins = parent.Plugins
	}
	child := opts
	child.Depth = depth
	cfg.Subagents, _ = json.Marshal(child) // numbers, strings and bools: cannot fail
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
		s.spent.total.merge(u)
		s.spent.sub.merge(u)
		s.spent.subRan = true
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

// subagentJob makes a child session, hands it its task and waits for the
// end of its run, on a goroutine of its own.
type subagentJob struct {
	reg    *Registry
	root   *actor.RootContext
	parent *actor.PID
	tag    tag
	index  int
	id     string
	cfg    store.Config
	task   string
	now    func() time.Time
	// persisted: with a store, the child is unloaded once done (it stays
	// stored and is restored on its next use); without one it stays.
	persisted bool
	// halt is closed when the child is to stop after its running tools.
	halt chan struct{}
}

// childTimeout bounds each request to the parent or the child.
const childTimeout = 10 * time.Second

// run reports the call's result to the parent; the parent drops it when
// the call was settled meanwhile.
func (j *subagentJob) run(ctx context.Context) {
	res := j.work(ctx)
	j.root.Send(j.parent, &toolDone{tag: j.tag, index: j.index, result: res, ended: j.now()})
}

// work makes the child, runs its task and returns the call's result.
func (j *subagentJob) work(ctx context.Context) tools.Result {
	fail := func(format string, args ...any) tools.Result {
		return tools.Result{Content: fmt.Sprintf("sub-agent %s: ", j.id) + fmt.Sprintf(format, args...), IsError: true}
	}
	respec := j.reg.childRespec()
	if respec == nil {
		return fail("this runtime cannot start sub-agents (its sessions have no registry that resolves configurations)")
	}
	// The parent's counter is stored before the child exists, so a
	// restored parent never names another child the same.
	if err := j.request(j.parent, &settled{}); err != nil {
		return fail("%v", err)
	}
	spec, err := respec(j.id, j.cfg)
	if err != nil {
		return fail("%v", err)
	}
	spec.Stored = j.cfg
	if ctx.Err() != nil {
		return tools.Result{Content: tools.InterruptedByAbort, IsError: true}
	}
	pid, err := j.reg.Create(context.WithoutCancel(ctx), spec)
	if err != nil {
		return fail("%v", err)
	}
	sink := &childSink{root: j.root, parent: j.parent, tag: j.tag, index: j.index, child: j.id, done: make(chan struct{})}
	defer j.release(pid, sink)
	j.root.Send(j.parent, &subagentStarted{tag: j.tag, index: j.index, child: j.id})
	if err := j.request(pid, &SubscribeSink{Sink: sink, Buffered: true}); err != nil {
		return fail("%v", err)
	}
	if err := j.request(pid, &eventsv1.Prompt{Text: j.task}); err != nil {
		return fail("%v", err)
	}
	halt := j.halt
	for {
		select {
		case <-sink.done:
			return sink.result(j.id)
		case <-halt:
			j.root.Send(pid, &eventsv1.Abort{KillTools: string(events.KillNone)})
			halt = nil // the child's result still comes, once its tools are done
		case <-ctx.Done():
			kill := events.KillKillable
			if errors.Is(context.Cause(ctx), errKillAll) {
				kill = events.KillAll
			}
			j.root.Send(pid, &eventsv1.Abort{KillTools: string(kill)})
			<-sink.done // the child's run ends at once, or when its immune tools are done
			return tools.Result{Content: tools.InterruptedByAbort, IsError: true}
		}
	}
}

// request sends msg to pid and waits for its reply, returning its error.
func (j *subagentJob) request(pid *actor.PID, msg any) error {
	res, err := j.root.RequestFuture(pid, msg, childTimeout).Result()
	if err != nil {
		return fmt.Errorf("no answer to %T: %v", msg, err)
	}
	if e := res.(*eventsv1.Reply).GetError(); e != nil {
		return fmt.Errorf("%s: %s", e.Code, e.Message)
	}
	return nil
}

// release lets a child go once its run is over: with a store it is
// unloaded (it stays stored and readable, restored on its next use);
// without one it stays loaded, as nothing else keeps it, and only the
// parent's link to it goes.
func (j *subagentJob) release(pid *actor.PID, sink *childSink) {
	if j.persisted {
		j.reg.Close(j.id)
		return
	}
	j.root.Send(pid, &Unsubscribe{Sink: sink})
}

// childSink passes a child's events to its parent until the child's run
// ends. Deliver and Close run on the child's goroutine; the job reads the
// outcome once done is closed.
type childSink struct {
	root   *actor.RootContext
	parent *actor.PID
	tag    tag
	index  int
	child  string
	done   chan struct{}

	ended  bool
	reason string
	text   string // the last assistant text
	err    string // the last error event's message
}

// Deliver passes ev on and keeps what the result is made of.
func (k *childSink) Deliver(ev *eventsv1.Event) {
	if k.ended {
		return
	}
	k.root.Send(k.parent, &childEvent{tag: k.tag, index: k.index, child: k.child, ev: ev})
	switch {
	case ev.GetMessageCommitted().GetMessage().GetRole() == "assistant":
		k.text = ev.GetMessageCommitted().GetMessage().GetContent()
	case ev.GetError() != nil:
		k.err = ev.GetError().GetMessage()
	case ev.GetAgentEnd() != nil:
		k.reason = ev.GetAgentEnd().GetReason()
		k.finish()
	}
}

// Close is called when the child stops before its run ended.
func (k *childSink) Close() {
	if !k.ended {
		k.reason = "closed"
		k.finish()
	}
}

func (k *childSink) finish() {
	k.ended = true
	close(k.done)
}

// result is the call's result: the child's final text when its run
// completed, else an error result that says how it ended.
func (k *childSink) result(id string) tools.Result {
	if k.reason == string(events.EndCompleted) {
		return tools.Result{Content: k.text}
	}
	why := k.err
	if why == "" {
		why = k.text
	}
	msg := fmt.Sprintf("sub-agent %s ended: %s", id, k.reason)
	if why != "" {
		msg += ": " + why
	}
	return tools.Result{Content: msg, IsError: true}
}
