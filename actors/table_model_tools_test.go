package actors

import (
	"slices"
	"testing"

	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

// testToolsCells: attach_tools and detach_tools answer at once in every
// state with tools_updated (told as "+attached -detached"), and leave the
// state and the run as they were.
func testToolsCells(t *testing.T, cmd any, told string) {
	catalog, err := tools.NewCatalog(builtin.TodoWrite())
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range tableStates {
		t.Run(state, func(t *testing.T) {
			c := newCell(t, state, &Env{Tools: catalog})
			mark := c.rec.Len()
			c.run(cmd, succeeds, step{now: one("tools_updated"), st: busyOrIdle(state), after: rest[state], history: restHistory[state]})
			if got := toolsUpdated(c.since(mark)); !slices.Equal(got, []string{told}) {
				t.Errorf("tools_updated %q, want %q", got, told)
			}
		})
	}
}

// testSwitchModelCells: model_switched at once; a request in flight
// finishes on the old model and the next one uses the new model.
func testSwitchModelCells(t *testing.T) {
	for _, state := range tableStates {
		t.Run(state, func(t *testing.T) {
			c := newCell(t, state, nil)
			mark := c.rec.Len()
			succeeds(t, c.send(&SwitchModel{Model: scriptModel(t, "script:b", tableB)}))
			st := busyOrIdle(state)
			st.model = "script:b"
			st.check(t, c.state())
			eventstest.ExpectTypes(t, c.since(mark), "model_switched")
			if m := c.rec.Events()[mark].GetModelSwitched(); m.GetFrom() != "script:inline" || m.GetTo() != "script:b" {
				t.Errorf("model_switched = %v", m)
			}
			// A prompt gives the model a next request to serve.
			mark = c.rec.Len()
			switch state {
			case "idle":
				// The prompt starts a run on model b at once.
				c.ok(&eventsv1.Prompt{Text: "next"})
				c.waitRunEnd("r-1")
				expectLabelled(t, "up to idle", c.since(mark), seq(runStart, answer, runEnd))
				if got, want := contents(c.history()), []string{"user:next", "assistant:B1"}; !slices.Equal(got, want) {
					t.Errorf("history = %q\nwant %q", got, want)
				}
				want{state: "idle", model: "script:b"}.check(t, c.state())
				checkLog(t, c.rec.Events())
			case "running", "streaming":
				c.ok(&eventsv1.Prompt{Text: "next"})
				c.check(mark, step{
					now: one("prompt_queued"), st: want{state: state, run: "r-1", prompts: []string{"next"}, model: "script:b"},
					after:   seq(rest[state][:len(rest[state])-len(runEnd)], one("turn_end", "message_committed"), nextTurn, answer, runEnd),
					history: []string{"user:go", "assistant:abcdefgh", "user:next", "assistant:B1"},
					final:   want{state: "idle", model: "script:b"},
				})
			case "executing_tools":
				c.check(mark, step{
					st:      want{state: state, run: "r-1", tools: []string{"hold", "hold_immune"}, model: "script:b"},
					after:   seq(toolEnd, toolEnd, twoResults, one("turn_end"), nextTurn, answer, runEnd),
					history: []string{"user:go", "assistant:", "tool:hold done", "tool:hold_immune done", "assistant:B1"},
					final:   want{state: "idle", model: "script:b"},
				})
			}
			var requests, usages []string
			for _, ev := range c.rec.Events() {
				if r := ev.GetRequestStart(); r != nil {
					requests = append(requests, r.Model)
				}
				if u := ev.GetTokenUsage(); u != nil {
					usages = append(usages, u.Model)
				}
			}
			models := []string{"script:inline", "script:b"}
			if state == "idle" {
				models = models[1:]
			}
			if !slices.Equal(requests, models) {
				t.Errorf("request_start models = %q, want %q", requests, models)
			}
			if !slices.Equal(usages, models) {
				t.Errorf("token_usage models = %q, want %q (usage is reported for the model that served it)", usages, models)
			}
		})
	}
}
