package actors

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

// family is a registry whose sessions, children included, resolve their
// stored configuration the way the runtime does: a model by name from a
// table of scripts, tools by name from the demo tools and subagent.
type family struct {
	t      *testing.T
	sys    *actor.ActorSystem
	reg    *testPlace
	models map[string]string
}

func newFamily(t *testing.T, env *Env, models map[string]string) *family {
	t.Helper()
	if env == nil {
		env = &Env{}
	}
	f := &family{t: t, sys: newSystem(t), models: models}
	f.reg = newPlace(f.sys, env, f.respec)
	t.Cleanup(f.reg.Shutdown) // children without a store stay loaded
	return f
}

// respec resolves cfg as the runtime's respec does.
func (f *family) respec(id string, cfg spec.Session) (Spec, error) {
	js, ok := f.models[cfg.Model]
	if !ok {
		return Spec{}, fmt.Errorf("unknown_model: no model %q", cfg.Model)
	}
	model, err := scriptModelErr(cfg.Model, js)
	if err != nil {
		return Spec{}, err
	}
	catalog, err := tools.NewCatalog(append(builtin.Demo(), SubagentTool())...)
	if err != nil {
		return Spec{}, err
	}
	set, err := catalog.Resolve(cfg.Tools)
	if err != nil {
		return Spec{}, fmt.Errorf("unknown_tool: %v", err)
	}
	return Spec{ID: id, Model: model, Tools: set, Stored: &spec.Session{System: cfg.System, Subagents: cfg.Subagents}}, nil
}

// parent starts session s1 on model with the tools named and options sub,
// recording its events.
func (f *family) parent(model string, names []string, sub *spec.Subagents) *harness {
	f.t.Helper()
	cfg := spec.Session{Model: model, System: "be brief", Tools: names, Subagents: sub}
	spec, err := f.respec("s1", cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	spec.Stored = &cfg
	return spawnSpec(f.t, f.sys, f.reg, spec)
}

// child subscribes to a loaded child session from its first event.
func (f *family) child(id string) *harness {
	f.t.Helper()
	pid, ok := f.reg.Lookup(id)
	if !ok {
		f.t.Fatalf("child %s is not loaded", id)
	}
	h := &harness{t: f.t, sys: f.sys, reg: f.reg, pid: pid, rec: eventstest.NewRecorder()}
	h.ok(&SubscribeSink{Sink: h.rec, Buffered: true})
	return h
}

var scriptResolver = script.NewResolver("")

func scriptModelErr(name, js string) (*llm.Model, error) {
	return scriptResolver.Resolve(name, json.RawMessage(js))
}

// Scripts of these tests: the parent hands a task to a sub-agent, the
// child answers after using a tool.
const (
	parentScript = `{"turns":[
		{"tool_calls":[{"name":"subagent","args":{"task":"Count the files.","description":"count files"}}]},
		{"text":"The sub-agent says 42."}]}`
	childScript = `{"turns":[
		{"tool_calls":[{"name":"echo","args":{"text":"42 files"}}]},
		{"text":"There are 42 files.","usage":{"input_tokens":100,"output_tokens":10}}]}`
)

// childRun is what a child emits for childScript's task.
var childRun = seq(one("session_created"), runStart, toolAnswer,
	one("tool_calls", "state_changed", "agent_status", "tool_execution_start"), toolEnd,
	one("message_committed", "turn_end"), nextTurn, answer, runEnd)

// TestSubagentNesting: the parent tells subagent_start after
// tool_execution_start, every event of the child whole and in order in
// sub_agent_event, then subagent_end with the child's final text before
// tool_execution_end; the text is the call's result. The child is a
// session of its own (its id, messages and events), its usage counts in
// the parent's totals and apart in subagent_usage.
func TestSubagentNesting(t *testing.T) {
	f := newFamily(t, nil, map[string]string{"parent": parentScript, "child": childScript})
	h := f.parent("parent", []string{"subagent", "echo"}, &spec.Subagents{Model: "child"})
	if st := h.state(); st.SubagentUsage != nil {
		t.Fatalf("subagent_usage before any sub-agent ran = %v, want null", st.SubagentUsage)
	}
	h.ok(&eventsv1.Prompt{Text: "How many files?"})
	h.waitFor("agent_end", 1)

	wrapped := slices.Repeat([]string{"sub_agent_event"}, len(childRun))
	if !h.expect(seq(one("session_created"), runStart, toolAnswer,
		one("tool_calls", "state_changed", "agent_status", "tool_execution_start", "subagent_start"),
		wrapped, one("subagent_end"), toolEnd, one("message_committed", "turn_end"),
		nextTurn, answer, runEnd)...) {
		t.FailNow()
	}
	evs := h.rec.Events()
	start := findType(evs, "subagent_start").GetSubagentStart()
	if start.ChildSession != "s1/sub-1" || start.Description != "count files" {
		t.Errorf("subagent_start = %v", start)
	}
	var inner []*eventsv1.Event
	for _, ev := range evs {
		if w := ev.GetSubAgentEvent(); w != nil {
			if w.CallId != "c-1" || w.ChildSession != "s1/sub-1" || w.Event.Session != "s1/sub-1" {
				t.Errorf("sub_agent_event = %v", w)
			}
			inner = append(inner, w.Event)
		}
	}
	eventstest.ExpectTypes(t, inner, childRun...)
	for i, ev := range inner {
		if ev.Seq != uint64(i+1) {
			t.Errorf("wrapped event %d has the child's seq %d, want %d", i, ev.Seq, i+1)
		}
	}
	if end := findType(evs, "subagent_end").GetSubagentEnd(); end.ChildSession != "s1/sub-1" || end.Result != "There are 42 files." {
		t.Errorf("subagent_end = %v", end)
	}
	if e := findType(evs, "tool_execution_end").GetToolExecutionEnd(); !e.Ok || e.Result != "There are 42 files." {
		t.Errorf("tool_execution_end = %v", e)
	}
	if got, want := contents(h.history()), []string{"user:How many files?", "assistant:", "tool:There are 42 files.", "assistant:The sub-agent says 42."}; !slices.Equal(got, want) {
		t.Errorf("parent history %q, want %q", got, want)
	}

	// The child is a session like any other: its own events, the same as
	// the wrapped ones, and its own history.
	c := f.child("s1/sub-1")
	if got := c.rec.Events(); !slices.EqualFunc(got, inner, func(a, b *eventsv1.Event) bool { return proto.Equal(a, b) }) {
		t.Errorf("the child's own events differ from those its parent wrapped")
	}
	if got, want := contents(c.history()), []string{"user:Count the files.", "assistant:", "tool:42 files", "assistant:There are 42 files."}; !slices.Equal(got, want) {
		t.Errorf("child history %q, want %q", got, want)
	}
	childUsage := c.state().Usage
	if childUsage.InputTokens < 100 || childUsage.OutputTokens < 10 {
		t.Fatalf("child usage %v", childUsage)
	}
	st := h.state()
	if !sameUsage(st.SubagentUsage, childUsage) {
		t.Errorf("subagent_usage %v, want the child's %v", st.SubagentUsage, childUsage)
	}
	own := findType(evs, "agent_end").GetAgentEnd().Usage
	if st.Usage.TotalTokens != own.TotalTokens+childUsage.TotalTokens || st.Usage.InputTokens != own.InputTokens+childUsage.InputTokens {
		t.Errorf("session usage %v, want the run's %v plus the child's %v", st.Usage, own, childUsage)
	}
	checkLog(t, evs)
}

func sameUsage(a, b *eventsv1.Usage) bool {
	return a.GetInputTokens() == b.GetInputTokens() && a.GetOutputTokens() == b.GetOutputTokens() &&
		a.GetTotalTokens() == b.GetTotalTokens() && a.GetCostUsd() == b.GetCostUsd()
}

// TestSubagentsRunConcurrently: two subagent calls of one batch run at
// the same time: both children have started before either ends.
func TestSubagentsRunConcurrently(t *testing.T) {
	f := newFamily(t, nil, map[string]string{
		"parent": `{"turns":[
			{"tool_calls":[{"name":"subagent","args":{"task":"one"}},{"name":"subagent","args":{"task":"two"}}]},
			{"text":"both done"}]}`,
		"child": `{"turns":[{"delay_ms":300,"text":"done"}]}`,
	})
	h := f.parent("parent", []string{"subagent", "sleep", "sleep_stubborn", "sleep_immune"}, &spec.Subagents{Model: "child"})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	var order []string
	for _, ev := range h.rec.Events() {
		w := ev.GetSubAgentEvent()
		switch {
		case w.GetEvent().GetAgentStart() != nil:
			order = append(order, "start "+w.ChildSession)
		case w.GetEvent().GetAgentEnd() != nil:
			order = append(order, "end "+w.ChildSession)
		}
	}
	if len(order) != 4 || !strings.HasPrefix(order[0], "start") || !strings.HasPrefix(order[1], "start") {
		t.Fatalf("the children ran one after the other: %q", order)
	}
	var results []string
	for _, m := range h.history() {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if !slices.Equal(results, []string{"done", "done"}) {
		t.Errorf("results %q", results)
	}
	if st := h.state(); st.SubagentUsage.GetOutputTokens() != 2 {
		t.Errorf("subagent_usage %v, want both children's", st.SubagentUsage)
	}
}
