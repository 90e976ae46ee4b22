package plugins

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
)

// DefaultBudget is how long one plugin may take to answer one hook.
const DefaultBudget = 50 * time.Millisecond

// Chain runs one session's plugins: for each hook, in priority order, each
// plugin that wants it. A plugin that panics, exceeds the budget or
// answers with an action its hook does not allow is disabled for the rest
// of the session; the Outcome reports it and the session carries on.
type Chain struct {
	plugins  []Plugin
	wants    map[Hook][]int
	disabled []bool
	budget   time.Duration
}

// NewChain orders ps by priority (then name) for one session. A budget of
// 0 means DefaultBudget. A nil *Chain runs no plugins.
func NewChain(budget time.Duration, ps ...Plugin) *Chain {
	if budget <= 0 {
		budget = DefaultBudget
	}
	ps = append([]Plugin(nil), ps...)
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Priority() != ps[j].Priority() {
			return ps[i].Priority() < ps[j].Priority()
		}
		return ps[i].Name() < ps[j].Name()
	})
	c := &Chain{plugins: ps, wants: map[Hook][]int{}, disabled: make([]bool, len(ps)), budget: budget}
	for i, p := range ps {
		for _, h := range p.Hooks() {
			c.wants[h] = append(c.wants[h], i)
		}
	}
	return c
}

// Has reports whether any plugin wants hook h, so callers can skip
// building its Event.
func (c *Chain) Has(h Hook) bool { return c != nil && len(c.wants[h]) > 0 }

// Tools returns the tools the plugins bring.
func (c *Chain) Tools() []tools.Tool {
	if c == nil {
		return nil
	}
	var ts []tools.Tool
	for _, p := range c.plugins {
		if tp, ok := p.(ToolProvider); ok {
			ts = append(ts, tp.Tools()...)
		}
	}
	return ts
}

// Outcome is what the plugins decided for one hook.
type Outcome struct {
	// Stop is the first action, in priority order, that stops or defers
	// the step: abort, skip, block_tool, hold_for_approval, ask, reject or
	// retry. Later plugins are not asked once one stops. Nil: go on.
	Stop *Decision
	// Args are replaced tool arguments (before_tool), nil when unchanged.
	Args json.RawMessage
	// Result is a replaced tool result (after_tool), nil when unchanged.
	Result *tools.Result
	// Summary is a replaced compaction summary (before_compact), "" when
	// unchanged.
	Summary string
	// Model is the first switch_model asked for, "" for none.
	Model string
	// Interventions are the texts to inject, in priority order.
	Interventions []Note
	// Emits are the plugin_events to publish, in order.
	Emits []Note
	// Failures are the plugins disabled while answering.
	Failures []Note
}

// Decision is an action and the plugin that took it.
type Decision struct {
	Plugin string
	Action Action
}

// Note is a plugin's contribution to an Outcome: an intervention's Text, a
// failure's Text, or an emit's Event or Name and Payload.
type Note struct {
	Plugin  string
	Text    string
	Event   proto.Message
	Name    string
	Payload json.RawMessage
}

// Run asks the plugins that want ev.Hook, in priority order. Replacements
// are chained: a later plugin sees the arguments or result an earlier one
// set, in ev.
func (c *Chain) Run(ev *Event) Outcome {
	var out Outcome
	if c == nil {
		return out
	}
	for _, i := range c.wants[ev.Hook] {
		if c.disabled[i] {
			continue
		}
		p := c.plugins[i]
		acts, fail := c.call(p, ev)
		if fail == "" {
			fail = c.apply(&out, p.Name(), ev, acts)
		}
		if fail != "" {
			c.disabled[i] = true
			out.Failures = append(out.Failures, Note{Plugin: p.Name(), Text: fail})
			continue
		}
		if out.Stop != nil {
			break
		}
	}
	return out
}

// apply folds a plugin's actions into out; it returns why the plugin must
// be disabled, or "".
func (c *Chain) apply(out *Outcome, name string, ev *Event, acts []Action) string {
	for _, a := range acts {
		if !allowed(ev.Hook, a.Kind) {
			return fmt.Sprintf("answered %s with %q, which that hook does not allow", ev.Hook, a.Kind)
		}
	}
	for _, a := range acts {
		switch a.Kind {
		case Continue:
		case Emit:
			out.Emits = append(out.Emits, Note{Plugin: name, Event: a.Event, Name: a.Name, Payload: a.Payload})
		case Intervene:
			out.Interventions = append(out.Interventions, Note{Plugin: name, Text: a.Text})
		case SwitchModel:
			if out.Model == "" {
				out.Model = a.Model
			}
		case ReplaceToolArgs:
			out.Args = a.Args
			ev.Call = &llm.ToolCall{Id: ev.Call.GetId(), Name: ev.Call.GetName(), Args: &eventsv1.RawJSON{Json: a.Args}}
		case ReplaceSummary:
			out.Summary = a.Text
			ev.Text = a.Text
		case ReplaceToolResult:
			out.Result = &tools.Result{Content: a.Result, IsError: a.IsError}
			ev.Result = out.Result
		default:
			if out.Stop == nil {
				out.Stop = &Decision{Plugin: name, Action: a}
			}
		}
	}
	return ""
}

// call runs one Handle within the budget, turning a panic or a timeout
// into a failure. The budget counts from the moment Handle starts, so a
// busy scheduler does not count against the plugin. A plugin that overran
// keeps its goroutine until it returns, but is never asked again. Handle gets a copy of ev, so that an
// abandoned Handle still reading it does not race with the replacements
// later plugins make.
func (c *Chain) call(p Plugin, ev *Event) (acts []Action, fail string) {
	type answer struct {
		acts  []Action
		panic any
	}
	done, started := make(chan answer, 1), make(chan struct{})
	evc := *ev
	go func() {
		close(started)
		defer func() {
			if r := recover(); r != nil {
				done <- answer{panic: r}
			}
		}()
		done <- answer{acts: p.Handle(&evc)}
	}()
	<-started
	timer := time.NewTimer(c.budget)
	defer timer.Stop()
	select {
	case a := <-done:
		if a.panic != nil {
			return nil, fmt.Sprintf("panicked in %s: %v", ev.Hook, a.panic)
		}
		return a.acts, ""
	case <-timer.C:
		return nil, fmt.Sprintf("took longer than its %v budget in %s", c.budget, ev.Hook)
	}
}
