package actors

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
)

// hooks is what a session keeps of its plugins: their chain, and what
// they and approvals left for later steps (nil until there is any, since
// an idle session's size class has no room for it).
type hooks struct {
	chain *plugins.Chain
	later *later
}

// later is what a session's hooks keep from one step to the next: the
// interventions the plugins asked for that wait for the next request,
// the "always" approvals recorded, and why a plugin refused the session
// at its start ("" when none did).
type later struct {
	interventions []string
	rules         []rule
	refused       string
}

// keep is what the hooks keep for later, to add to.
func (h *hooks) keep() *later {
	if h.later == nil {
		h.later = new(later)
	}
	return h.later
}

// interventions are the interventions waiting for the next request.
func (h *hooks) interventions() []string {
	if h.later == nil {
		return nil
	}
	return h.later.interventions
}

// refused is why a plugin refused the session at its start, "" when none
// did.
func (h *hooks) refused() string {
	if h.later == nil {
		return ""
	}
	return h.later.refused
}

// rules are the "always" approvals recorded.
func (h *hooks) rules() []rule {
	if h.later == nil {
		return nil
	}
	return h.later.rules
}

// codePluginDisabled is the code of the error event that reports a plugin
// disabled for panicking, overrunning its budget or misbehaving.
const codePluginDisabled = "plugin_disabled"

// hook asks the plugins that want ev.Hook and applies what every hook
// shares: plugin events are published, disabled plugins reported,
// interventions kept for the next request and model switches started.
// What stops or changes the step is the caller's to act on.
func (s *session) hook(ev *plugins.Event) plugins.Outcome {
	if !s.hooks.chain.Has(ev.Hook) {
		return plugins.Outcome{}
	}
	ev.Session, ev.Workspace = s.spec.ID, s.home.env.Workspace
	if s.run != nil {
		ev.RunID, ev.Turn = s.run.id, s.run.turn
	}
	ev.Usage = s.pluginUsage()
	out := s.hooks.chain.Run(ev)
	for _, f := range out.Failures {
		s.emit(&eventsv1.Error{Code: codePluginDisabled, Message: fmt.Sprintf("plugin %s is disabled for this session: it %s", f.Plugin, f.Text)})
	}
	for _, e := range out.Emits {
		s.emitFor(e)
	}
	for _, n := range out.Interventions {
		l := s.hooks.keep()
		l.interventions = append(l.interventions, n.Text)
	}
	if out.Model != "" {
		s.switchAsync(out.Model)
	}
	return out
}

// emitFor publishes a plugin's event: a payload of the vocabulary, or a
// plugin_event. A payload that is not an event is the plugin's bug.
func (s *session) emitFor(n plugins.Note) {
	if n.Event == nil {
		s.emit(&eventsv1.PluginEvent{Plugin: n.Plugin, Name: n.Name, Payload: &eventsv1.RawJSON{Json: n.Payload}})
		return
	}
	if !isPayload(n.Event) {
		s.emit(&eventsv1.Error{Code: codePluginDisabled, Message: fmt.Sprintf("plugin %s emitted %T, which is not an event", n.Plugin, n.Event)})
		return
	}
	s.emit(n.Event)
}

// isPayload reports whether m can be published as an event.
func isPayload(m proto.Message) (ok bool) {
	defer func() { ok = recover() == nil && ok }()
	return events.Type(events.New(m)) != ""
}

// pluginUsage is what plugins see of the run's and the session's spending.
func (s *session) pluginUsage() plugins.Usage {
	spent := s.notes.usage()
	u := plugins.Usage{
		SessionTokens:  spent.total.total(),
		SessionCostUSD: spent.total.cost,
		ContextUsed:    spent.context,
		ContextWindow:  s.spec.Model.ContextWindow,
	}
	if s.run != nil {
		u.RunTurns, u.RunTokens, u.RunCostUSD = s.run.turn, s.run.usage.total(), s.run.usage.cost
	}
	return u
}

// applyInterventions injects the plugins' pending interventions into the
// context, joined in priority order, before a request.
func (s *session) applyInterventions() {
	if len(s.hooks.interventions()) == 0 {
		return
	}
	text := strings.Join(s.hooks.later.interventions, "\n\n")
	s.hooks.later.interventions = nil
	s.emit(&eventsv1.Intervention{Text: text})
	s.commit(llm.UserMessage(text))
}

// abortBy ends the run because a plugin said so, by the same path as the
// user's abort.
func (s *session) abortBy(d *plugins.Decision) {
	s.stop(&eventsv1.Abort{}, s.pluginAborted(d))
}

// pluginAborted reports a plugin's abort — an error event when the plugin
// says why, then agent_abort — and returns the reason the run ends with.
func (s *session) pluginAborted(d *plugins.Decision) events.EndReason {
	decided := time.Now()
	reason := orAborted(d.Action.Reason)
	if d.Action.Text != "" {
		s.emit(&eventsv1.Error{Code: reason, Message: d.Action.Text})
	}
	s.markAborted(reason, events.EndReason(reason), decided)
	return events.EndReason(reason)
}

// finishHook asks before_finish whether a run that would end goes on (an
// intervention) or ends another way (an abort); it reports whether it took
// care of the run, which otherwise completes.
func (s *session) finishHook() (handled bool) {
	out := s.hook(&plugins.Event{Hook: plugins.BeforeFinish})
	if d := out.Stop; d != nil {
		s.abortBy(d)
		return true
	}
	if len(s.hooks.interventions()) > 0 {
		s.startTurn()
		return true
	}
	return false
}

// requestHook asks before_request; it reports whether the request may go.
func (s *session) requestHook() bool {
	out := s.hook(&plugins.Event{Hook: plugins.BeforeRequest, Messages: s.hist.Messages()})
	d := out.Stop
	if d == nil {
		return true
	}
	if d.Action.Kind == plugins.Skip {
		s.finishRun(fsm.Finish, events.EndSkipped)
	} else {
		s.abortBy(d)
	}
	return false
}
