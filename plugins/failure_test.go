package plugins_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/tack-run/tack/plugins"
)

// budget is the small hook budget of the failure tests.
const budget = 20 * time.Millisecond

// TestFailingPluginsAreDisabled runs a plugin that panics and one that
// blocks past the budget beside a good one: the bad ones are disabled
// with a Failure and never called again, the good one goes on.
func TestFailingPluginsAreDisabled(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	panicking := &fake{name: "panicking", priority: 1, hooks: []plugins.Hook{plugins.BeforeRequest, plugins.AfterTurn},
		handle: func(*plugins.Event) []plugins.Action { panic("boom") }}
	slow := &fake{name: "slow", priority: 2, hooks: []plugins.Hook{plugins.BeforeRequest, plugins.AfterTurn},
		handle: func(*plugins.Event) []plugins.Action { <-release; return nil }}
	good := answering("good", 3, plugins.BeforeRequest, plugins.Action{Kind: plugins.Intervene, Text: "hi"})
	chain := plugins.NewChain(budget, slow, good, panicking)

	tests := []struct {
		name string
		hook plugins.Hook
		want plugins.Outcome
	}{
		{name: "first run disables both", hook: plugins.BeforeRequest, want: plugins.Outcome{
			Interventions: []plugins.Note{{Plugin: "good", Text: "hi"}},
			Failures: []plugins.Note{
				{Plugin: "panicking", Text: "panicked in before_request: boom"},
				{Plugin: "slow", Text: "took longer than its 20ms budget in before_request"},
			},
		}},
		{name: "second run without them", hook: plugins.BeforeRequest, want: plugins.Outcome{
			Interventions: []plugins.Note{{Plugin: "good", Text: "hi"}},
		}},
		{name: "other hooks without them", hook: plugins.AfterTurn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chain.Run(&plugins.Event{Hook: tt.hook}); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Run = %+v,\nwant %+v", got, tt.want)
			}
		})
	}
	if p, s, g := panicking.calls.Load(), slow.calls.Load(), good.calls.Load(); p != 1 || s != 1 || g != 2 {
		t.Errorf("calls: panicking %d, slow %d, good %d; want 1, 1, 2", p, s, g)
	}
}

// TestPanicWithNil shows that even panic(nil) is caught.
func TestPanicWithNil(t *testing.T) {
	p := &fake{name: "nil", priority: 1, hooks: []plugins.Hook{plugins.SessionStart},
		handle: func(*plugins.Event) []plugins.Action { panic(nil) }}
	out := plugins.NewChain(0, p).Run(&plugins.Event{Hook: plugins.SessionStart})
	if len(out.Failures) != 1 || out.Failures[0].Plugin != "nil" {
		t.Errorf("Run = %+v, want one failure", out)
	}
}

func TestNilChain(t *testing.T) {
	var c *plugins.Chain
	if got := c.Run(&plugins.Event{Hook: plugins.BeforeTool}); !reflect.DeepEqual(got, plugins.Outcome{}) {
		t.Errorf("Run = %+v, want nothing", got)
	}
	if c.Has(plugins.BeforeTool) || c.Tools() != nil {
		t.Error("a nil chain has hooks or tools")
	}
}
