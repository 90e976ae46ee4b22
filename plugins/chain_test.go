package plugins_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/tools"
)

// allKinds is every action kind.
var allKinds = []plugins.Kind{
	plugins.Continue, plugins.Intervene, plugins.Abort, plugins.Skip, plugins.Emit, plugins.SwitchModel,
	plugins.BlockTool, plugins.ReplaceToolArgs, plugins.HoldForApproval, plugins.Ask, plugins.Retry,
	plugins.ReplaceToolResult, plugins.Reject, plugins.ReplaceSummary,
}

// stopping are the kinds that end up in Outcome.Stop.
var stopping = []plugins.Kind{
	plugins.Abort, plugins.Skip, plugins.BlockTool, plugins.HoldForApproval, plugins.Ask, plugins.Reject, plugins.Retry,
}

// toolCall is a call of shell with args.
func toolCall(args string) *eventsv1.ToolCall {
	return &eventsv1.ToolCall{Id: "c-1", Name: "shell", Args: &eventsv1.RawJSON{Json: []byte(args)}}
}

// TestAllowedTable pins Allowed to issue 4's table of hooks and actions
// (continue and emit everywhere), plus Tack's ask at before_tool.
func TestAllowedTable(t *testing.T) {
	want := map[plugins.Hook][]plugins.Kind{
		plugins.SessionStart:   {plugins.Abort},
		plugins.SessionEnd:     {},
		plugins.BeforePrompt:   {plugins.Intervene, plugins.Abort, plugins.Skip},
		plugins.BeforeRequest:  {plugins.Intervene, plugins.Abort, plugins.Skip, plugins.SwitchModel},
		plugins.AfterResponse:  {plugins.Intervene, plugins.Abort, plugins.Skip, plugins.SwitchModel},
		plugins.BeforeTool:     {plugins.BlockTool, plugins.ReplaceToolArgs, plugins.HoldForApproval, plugins.Ask, plugins.Abort},
		plugins.OnToolError:    {plugins.Retry, plugins.Abort, plugins.Skip, plugins.SwitchModel},
		plugins.AfterTool:      {plugins.ReplaceToolResult, plugins.Intervene, plugins.Abort, plugins.SwitchModel},
		plugins.AfterToolBatch: {plugins.Intervene, plugins.Abort, plugins.SwitchModel},
		plugins.BeforeFinish:   {plugins.Intervene, plugins.Abort},
		plugins.BeforeCompact:  {plugins.Skip, plugins.ReplaceSummary},
		plugins.BeforeSteering: {plugins.Reject, plugins.Intervene},
		plugins.AfterTurn:      {},
	}
	if !reflect.DeepEqual(plugins.Allowed, want) {
		t.Errorf("Allowed = %v,\nwant %v", plugins.Allowed, want)
	}
	for h, ks := range plugins.Allowed {
		for _, k := range ks {
			if !slices.Contains(allKinds, k) {
				t.Errorf("%s allows %q, which allKinds lacks", h, k)
			}
		}
	}
}

// full returns an action of kind k with every field set.
func full(k plugins.Kind, event *eventsv1.LoopDetected) plugins.Action {
	return plugins.Action{Kind: k, Text: "text", Reason: "reason", AutoResume: true, Event: event,
		Args: json.RawMessage(`{"command":"ls"}`), Result: "result", IsError: true, Model: "m2", Hint: "hint",
		Family: "family", Options: []string{"a", "b"}, Timeout: time.Second, Name: "name", Payload: json.RawMessage(`{"k":1}`)}
}

// folded is what the chain makes of plugin p answering a alone.
func folded(p string, a plugins.Action) plugins.Outcome {
	var out plugins.Outcome
	switch a.Kind {
	case plugins.Continue:
	case plugins.Emit:
		out.Emits = []plugins.Note{{Plugin: p, Event: a.Event, Name: a.Name, Payload: a.Payload}}
	case plugins.Intervene:
		out.Interventions = []plugins.Note{{Plugin: p, Text: a.Text}}
	case plugins.SwitchModel:
		out.Model = a.Model
	case plugins.ReplaceToolArgs:
		out.Args = a.Args
	case plugins.ReplaceToolResult:
		out.Result = &tools.Result{Content: a.Result, IsError: a.IsError}
	case plugins.ReplaceSummary:
		out.Summary = a.Text
	default:
		out.Stop = &plugins.Decision{Plugin: p, Action: a}
	}
	return out
}

// TestEveryAction answers every hook with every kind of action: an allowed
// one is folded into the Outcome as documented, a disallowed one disables
// the plugin.
func TestEveryAction(t *testing.T) {
	hooks := slices.Sorted(maps.Keys(plugins.Allowed))
	for _, h := range hooks {
		ks := plugins.Allowed[h]
		for _, k := range allKinds {
			ok := k == plugins.Continue || k == plugins.Emit || slices.Contains(ks, k)
			t.Run(fmt.Sprintf("%s/%s", h, k), func(t *testing.T) {
				a := full(k, &eventsv1.LoopDetected{Kind: "repeat", Tool: "shell", Count: 3})
				p := answering("p", 1, h, a)
				chain := plugins.NewChain(0, p)
				got := chain.Run(&plugins.Event{Hook: h, Call: toolCall(`{}`), Result: &tools.Result{Content: "r"}})
				want := folded("p", a)
				if !ok {
					want = plugins.Outcome{Failures: []plugins.Note{{Plugin: "p",
						Text: fmt.Sprintf("answered %s with %q, which that hook does not allow", h, k)}}}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("Run = %+v,\nwant %+v", got, want)
				}
				chain.Run(&plugins.Event{Hook: h})
				if n, wantN := p.calls.Load(), map[bool]int32{true: 2, false: 1}[ok]; n != wantN {
					t.Errorf("plugin called %d times, want %d", n, wantN)
				}
			})
		}
	}
}

func TestOrder(t *testing.T) {
	var (
		mu    sync.Mutex
		order []string
	)
	record := func(name string, priority int, hooks ...plugins.Hook) *fake {
		return &fake{name: name, priority: priority, hooks: hooks, handle: func(*plugins.Event) []plugins.Action {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, name)
			return nil
		}}
	}
	chain := plugins.NewChain(0,
		record("c", 300, plugins.BeforeRequest),
		record("b", 100, plugins.BeforeRequest, plugins.AfterTurn),
		record("other hook", 1, plugins.AfterTurn),
		record("a", 100, plugins.BeforeRequest),
		record("z", 5, plugins.BeforeRequest),
	)
	tests := []struct {
		hook plugins.Hook
		want []string
	}{
		{hook: plugins.BeforeRequest, want: []string{"z", "a", "b", "c"}},
		{hook: plugins.AfterTurn, want: []string{"other hook", "b"}},
		{hook: plugins.BeforeTool},
	}
	for _, tt := range tests {
		t.Run(string(tt.hook), func(t *testing.T) {
			order = nil
			if got := chain.Has(tt.hook); got != (len(tt.want) > 0) {
				t.Errorf("Has = %v", got)
			}
			chain.Run(&plugins.Event{Hook: tt.hook})
			if !reflect.DeepEqual(order, tt.want) {
				t.Errorf("order = %q, want %q", order, tt.want)
			}
		})
	}
}

func TestFolding(t *testing.T) {
	intervene := func(text string) plugins.Action { return plugins.Action{Kind: plugins.Intervene, Text: text} }
	emit := func(name string) plugins.Action { return plugins.Action{Kind: plugins.Emit, Name: name} }
	tests := []struct {
		name     string
		plugins  []*fake
		want     plugins.Outcome
		uncalled []string
	}{
		{name: "first stop ends the chain",
			plugins: []*fake{
				answering("one", 1, plugins.BeforeTool, emit("e1")),
				answering("two", 2, plugins.BeforeTool, plugins.Action{Kind: plugins.BlockTool, Reason: "no"}),
				answering("three", 3, plugins.BeforeTool, plugins.Action{Kind: plugins.Abort}),
			},
			want: plugins.Outcome{
				Stop:  &plugins.Decision{Plugin: "two", Action: plugins.Action{Kind: plugins.BlockTool, Reason: "no"}},
				Emits: []plugins.Note{{Plugin: "one", Name: "e1"}},
			},
			uncalled: []string{"three"}},
		{name: "first stop of one plugin wins, its other actions fold",
			plugins: []*fake{answering("one", 1, plugins.BeforeRequest,
				emit("before"), plugins.Action{Kind: plugins.Abort, Reason: "a"}, plugins.Action{Kind: plugins.Skip}, intervene("i"), emit("after"))},
			want: plugins.Outcome{
				Stop:          &plugins.Decision{Plugin: "one", Action: plugins.Action{Kind: plugins.Abort, Reason: "a"}},
				Interventions: []plugins.Note{{Plugin: "one", Text: "i"}},
				Emits:         []plugins.Note{{Plugin: "one", Name: "before"}, {Plugin: "one", Name: "after"}},
			}},
		{name: "interventions join in priority order",
			plugins: []*fake{
				answering("late", 900, plugins.AfterToolBatch, intervene("third")),
				answering("early", 10, plugins.AfterToolBatch, intervene("first"), intervene("second")),
				answering("quiet", 20, plugins.AfterToolBatch),
			},
			want: plugins.Outcome{Interventions: []plugins.Note{
				{Plugin: "early", Text: "first"}, {Plugin: "early", Text: "second"}, {Plugin: "late", Text: "third"}}}},
		{name: "first switch_model wins",
			plugins: []*fake{
				answering("b", 2, plugins.AfterResponse, plugins.Action{Kind: plugins.SwitchModel, Model: "second"}),
				answering("a", 1, plugins.AfterResponse, plugins.Action{Kind: plugins.SwitchModel, Model: "first"}),
			},
			want: plugins.Outcome{Model: "first"}},
		{name: "a disabled plugin does not stop the others",
			plugins: []*fake{
				answering("bad", 1, plugins.BeforeFinish, emit("lost"), plugins.Action{Kind: plugins.Skip}),
				answering("good", 2, plugins.BeforeFinish, intervene("go on")),
			},
			want: plugins.Outcome{
				Interventions: []plugins.Note{{Plugin: "good", Text: "go on"}},
				Failures:      []plugins.Note{{Plugin: "bad", Text: `answered before_finish with "skip", which that hook does not allow`}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := make([]plugins.Plugin, len(tt.plugins))
			for i, p := range tt.plugins {
				ps[i] = p
			}
			got := plugins.NewChain(0, ps...).Run(&plugins.Event{Hook: tt.plugins[0].hooks[0], Call: toolCall(`{}`)})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Run = %+v,\nwant %+v", got, tt.want)
			}
			for _, p := range tt.plugins {
				if n := p.calls.Load(); (n == 0) != slices.Contains(tt.uncalled, p.name) {
					t.Errorf("%s called %d times", p.name, n)
				}
			}
		})
	}
}
