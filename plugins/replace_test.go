package plugins_test

import (
	"encoding/json"
	"reflect"
	"runtime"
	"sync"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/tools"
)

// TestReplacementsChain shows that each plugin sees the arguments or the
// result the ones before it set, and that the Outcome holds the last.
func TestReplacementsChain(t *testing.T) {
	args := func(s string) plugins.Action {
		return plugins.Action{Kind: plugins.ReplaceToolArgs, Args: json.RawMessage(s)}
	}
	result := func(s string, isError bool) plugins.Action {
		return plugins.Action{Kind: plugins.ReplaceToolResult, Result: s, IsError: isError}
	}
	tests := []struct {
		name       string
		hook       plugins.Hook
		answers    [][]plugins.Action // per plugin, in priority order
		wantSeen   []string           // the args or result content each plugin saw
		wantArgs   string
		wantResult *tools.Result
	}{
		{name: "args", hook: plugins.BeforeTool,
			answers:  [][]plugins.Action{{args(`{"command":"ls -a"}`)}, nil, {args(`{"command":"ls -la"}`)}, nil},
			wantSeen: []string{`{"command":"ls"}`, `{"command":"ls -a"}`, `{"command":"ls -a"}`, `{"command":"ls -la"}`},
			wantArgs: `{"command":"ls -la"}`},
		{name: "args then block", hook: plugins.BeforeTool,
			answers:  [][]plugins.Action{{args(`{"command":"rm x"}`)}, {{Kind: plugins.BlockTool}}, {args(`{}`)}},
			wantSeen: []string{`{"command":"ls"}`, `{"command":"rm x"}`},
			wantArgs: `{"command":"rm x"}`},
		{name: "result", hook: plugins.AfterTool,
			answers:    [][]plugins.Action{{result("short", false)}, {result("shorter", true)}, nil},
			wantSeen:   []string{"long output", "short", "shorter"},
			wantResult: &tools.Result{Content: "shorter", IsError: true}},
		{name: "no replacement", hook: plugins.AfterTool,
			answers:  [][]plugins.Action{nil, nil},
			wantSeen: []string{"long output", "long output"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				seen []string
			)
			var ps []plugins.Plugin
			for i, acts := range tt.answers {
				ps = append(ps, &fake{name: string(rune('a' + i)), priority: i + 1, hooks: []plugins.Hook{tt.hook},
					handle: func(ev *plugins.Event) []plugins.Action {
						mu.Lock()
						defer mu.Unlock()
						if ev.Call.GetId() != "c-1" || ev.Call.GetName() != "shell" {
							t.Errorf("plugin %d sees call %v", i, ev.Call)
						}
						if tt.hook == plugins.BeforeTool {
							seen = append(seen, string(ev.Call.GetArgs().GetJson()))
						} else {
							seen = append(seen, ev.Result.Content)
						}
						return acts
					}})
			}
			orig := toolCall(`{"command":"ls"}`)
			ev := &plugins.Event{Hook: tt.hook, Call: orig, Result: &tools.Result{Content: "long output"}}
			out := plugins.NewChain(0, ps...).Run(ev)
			if !reflect.DeepEqual(seen, tt.wantSeen) {
				t.Errorf("plugins saw %q, want %q", seen, tt.wantSeen)
			}
			if string(out.Args) != tt.wantArgs || !reflect.DeepEqual(out.Result, tt.wantResult) {
				t.Errorf("Outcome Args %s, Result %+v; want %s, %+v", out.Args, out.Result, tt.wantArgs, tt.wantResult)
			}
			if got := string(orig.GetArgs().GetJson()); got != `{"command":"ls"}` {
				t.Errorf("the original call was changed to %s", got)
			}
		})
	}
}

// TestAbandonedPluginDoesNotRace keeps a plugin reading its Event after it
// overran while a later plugin replaces the arguments; -race proves the
// abandoned Handle works on a copy.
func TestAbandonedPluginDoesNotRace(t *testing.T) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	reader := &fake{name: "reader", priority: 1, hooks: []plugins.Hook{plugins.BeforeTool},
		handle: func(ev *plugins.Event) []plugins.Action {
			for {
				select {
				case <-stop:
					return nil
				default:
					_ = ev.Call.GetArgs().GetJson()
					_ = ev.Result
					runtime.Gosched()
				}
			}
		}}
	replacer := answering("replacer", 2, plugins.BeforeTool,
		plugins.Action{Kind: plugins.ReplaceToolArgs, Args: json.RawMessage(`{"command":"pwd"}`)})
	ev := &plugins.Event{Hook: plugins.BeforeTool, Call: toolCall(`{"command":"ls"}`)}
	out := plugins.NewChain(budget, reader, replacer).Run(ev)
	if len(out.Failures) != 1 || string(out.Args) != `{"command":"pwd"}` {
		t.Fatalf("Run = %+v", out)
	}
	for range 1000 { // the caller goes on using its event
		ev.Call = &eventsv1.ToolCall{Id: ev.Call.GetId()}
	}
}
