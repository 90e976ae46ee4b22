package builtin_test

import (
	"reflect"
	"strings"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/builtin"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/workspace"
)

func TestRegister(t *testing.T) {
	r := plugins.NewRegistry()
	if err := builtin.Register(r); err != nil {
		t.Fatalf("Register: %v", err)
	}
	want := []string{"approval", "ask_user", "large_result_offload", "limits", "loop_detection"}
	if got := r.Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if err := builtin.Register(r); err == nil || !strings.Contains(err.Error(), `"limits" is registered already`) {
		t.Errorf("second Register = %v, want an error naming the duplicates", err)
	}
}

// TestAllInOneChain builds every built-in with its defaults and checks the
// order they run in and who answers a before_tool of each kind.
func TestAllInOneChain(t *testing.T) {
	r := plugins.NewRegistry()
	if err := builtin.Register(r); err != nil {
		t.Fatalf("Register: %v", err)
	}
	var cfgs []plugins.Config
	for _, n := range r.Names() {
		cfgs = append(cfgs, plugins.Config{Name: n})
	}
	ps, err := r.Build(cfgs)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	priorities := map[string]int{}
	for _, p := range ps {
		priorities[p.Name()] = p.Priority()
	}
	wantPriorities := map[string]int{"ask_user": 10, "limits": 50, "approval": 100, "loop_detection": 200, "large_result_offload": 300}
	if !reflect.DeepEqual(priorities, wantPriorities) {
		t.Errorf("priorities = %v, want %v", priorities, wantPriorities)
	}
	chain := plugins.NewChain(0, ps...)
	if ts := chain.Tools(); len(ts) != 1 || ts[0].Spec().Name != "ask_user" {
		t.Errorf("Tools = %v, want ask_user", ts)
	}
	tests := []struct {
		name   string
		ev     *plugins.Event
		plugin string
		kind   plugins.Kind
	}{
		{name: "ask_user asks", plugin: "ask_user", kind: plugins.Ask,
			ev: &plugins.Event{Hook: plugins.BeforeTool, Call: &eventsv1.ToolCall{Name: "ask_user", Args: &eventsv1.RawJSON{Json: []byte(`{"question":"q"}`)}}}},
		{name: "approval holds shell", plugin: "approval", kind: plugins.HoldForApproval,
			ev: &plugins.Event{Hook: plugins.BeforeTool, Call: &eventsv1.ToolCall{Name: "shell", Args: &eventsv1.RawJSON{Json: []byte(`{"command":"rm x"}`)}}}},
		{name: "limits abort", plugin: "limits", kind: plugins.Abort,
			ev: &plugins.Event{Hook: plugins.BeforeRequest, Usage: plugins.Usage{RunTurns: 100}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := chain.Run(tt.ev)
			if len(out.Failures) != 0 || out.Stop == nil || out.Stop.Plugin != tt.plugin || out.Stop.Action.Kind != tt.kind {
				t.Errorf("Run = %+v, want %s from %s", out, tt.kind, tt.plugin)
			}
		})
	}

	t.Run("after_tool: loop_detection then large_result_offload", func(t *testing.T) {
		call := &eventsv1.ToolCall{Id: "c-1", Name: "shell", Args: &eventsv1.RawJSON{Json: []byte(`{"command":"cat big"}`)}}
		ws := workspace.Shared(t.TempDir())
		var out plugins.Outcome
		for range 3 {
			out = chain.Run(&plugins.Event{Hook: plugins.AfterTool, Session: "s1", RunID: "r-1", Call: call,
				Result: &tools.Result{Content: strings.Repeat("x", 80001)}, Workspace: ws})
		}
		var emitted []string
		for _, e := range out.Emits {
			emitted = append(emitted, e.Plugin+" "+string(e.Event.ProtoReflect().Descriptor().Name()))
		}
		want := []string{"loop_detection LoopDetected", "large_result_offload LargeResultOffloaded"}
		if out.Stop != nil || len(out.Failures) != 0 || !reflect.DeepEqual(emitted, want) ||
			len(out.Interventions) != 1 || out.Interventions[0].Plugin != "loop_detection" ||
			out.Result == nil || !strings.Contains(out.Result.Content, "76001 characters omitted") {
			t.Errorf("Run = %+v; emitted %q, want %q", out, emitted, want)
		}
	})
}
