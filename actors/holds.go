package actors

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/tools"
)

// hold is a call waiting for a person: an approval (id ap-N) or a
// question (ref q-N). The rest of the batch runs meanwhile; when nothing
// else runs the session pauses, idle, until the answer comes.
type hold struct {
	id         string
	question   bool
	family     string
	hint       string
	text       string
	options    []string
	autoResume bool
	deadline   time.Time
	timer      *time.Timer
}

// rule is an "always" approval: the tool, and for shell its command family.
type rule struct{ tool, family string }

// holdForApproval holds a call until it is approved, rejected or times out.
func (s *session) holdForApproval(c *call, d *plugins.Decision) {
	s.touch()
	timeout := d.Action.Timeout
	if timeout <= 0 {
		timeout = s.home.env.approvalTimeout()
	}
	s.notes.ids.Holds++
	h := &hold{id: "ap-" + strconv.FormatUint(s.notes.ids.Holds, 10), family: d.Action.Family, hint: d.Action.Hint,
		autoResume: d.Action.AutoResume, deadline: s.home.env.now().Add(timeout)}
	t, id := s.run.tag(), h.id
	h.timer = time.AfterFunc(timeout, func() { s.home.post(&holdExpired{tag: t, id: id}) })
	c.hold = h
	s.emit(&eventsv1.ApprovalRequired{ApprovalId: h.id, Tool: c.tc.Name, CallId: c.tc.Id, Args: &eventsv1.RawJSON{Json: c.args}, Hint: h.hint})
}

// ask holds a call as a question; the answer becomes its result.
func (s *session) ask(c *call, d *plugins.Decision) {
	s.touch()
	s.notes.ids.Holds++
	c.hold = &hold{id: "q-" + strconv.FormatUint(s.notes.ids.Holds, 10), question: true, text: d.Action.Text, options: d.Action.Options}
	s.emit(&eventsv1.AskUser{Ref: c.hold.id, Question: c.hold.text, Options: c.hold.options})
}

// allowedAlways reports whether an "always" approval covers a call.
func (s *session) allowedAlways(tool, family string) bool {
	for _, r := range s.hooks.rules() {
		if r.tool == tool && r.family == family {
			return true
		}
	}
	return false
}

// heldCall finds the call waiting on approval id (or question ref).
func (s *session) heldCall(id string, question bool) *call {
	if s.run == nil || s.run.batch == nil {
		return nil
	}
	for _, c := range s.run.batch.calls {
		if c.held() && c.hold.id == id && c.hold.question == question {
			return c
		}
	}
	return nil
}

// approve runs the held call and takes the run up again.
func (s *session) approve(ctx actor.Context, m *eventsv1.Approve) {
	c := s.heldCall(m.ApprovalId, false)
	if c == nil {
		s.fail(ctx, events.CodeNoPendingApproval, fmt.Sprintf("no approval %q is pending", m.ApprovalId))
		return
	}
	h := c.hold
	h.timer.Stop()
	c.hold = nil
	s.emit(&eventsv1.ApprovalResolved{ApprovalId: h.id, Status: string(events.ApprovalApproved)})
	s.touch()
	if m.Always {
		l := s.hooks.keep()
		l.rules = append(l.rules, rule{tool: c.tc.Name, family: h.family})
		var family *string
		if h.family != "" {
			family = &h.family
		}
		s.emit(&eventsv1.ToolApprovedAlways{Tool: c.tc.Name, CommandFamily: family})
	}
	s.reply(ctx, &eventsv1.Reply{})
	s.resume("tool_approved")
	s.launch(c)
}

// reject answers the held call with "rejected: <reason>"; the run ends
// once its batch is done, unless the approval said auto_resume.
func (s *session) reject(ctx actor.Context, m *eventsv1.Reject) {
	c := s.heldCall(m.ApprovalId, false)
	if c == nil {
		s.fail(ctx, events.CodeNoPendingApproval, fmt.Sprintf("no approval %q is pending", m.ApprovalId))
		return
	}
	s.reply(ctx, &eventsv1.Reply{})
	reason := m.Reason
	if reason == "" {
		reason = "rejected by the user"
	}
	s.refuse(c, events.ApprovalRejected, reason, "tool_rejected")
}

// holdExpired rejects an approval nobody answered in time.
func (s *session) holdExpired(m *holdExpired) {
	if !s.current(m.tag) {
		return
	}
	if c := s.heldCall(m.id, false); c != nil {
		s.refuse(c, events.ApprovalTimeout, "approval timed out", "tool_approval_timeout")
	}
}

// refuse settles a held approval as refused; the run goes on only when the
// approval asked to resume.
func (s *session) refuse(c *call, status events.ApprovalStatus, reason, trigger string) {
	auto := c.hold.autoResume
	s.resolveHold(c, status, tools.RejectedPrefix+reason)
	if auto {
		s.resume(trigger)
	} else if s.run.end == "" {
		s.run.end = events.EndRejected
	}
	s.batchProgress()
}

// respond answers a question: the answer is the call's result.
func (s *session) respond(ctx actor.Context, m *eventsv1.Respond) {
	c := s.heldCall(m.Ref, true)
	if c == nil {
		s.fail(ctx, events.CodeNoPendingQuestion, fmt.Sprintf("no question %q is pending", m.Ref))
		return
	}
	s.touch()
	c.hold = nil
	s.emit(&eventsv1.UserResponded{Ref: m.Ref, Response: m.Response})
	s.reply(ctx, &eventsv1.Reply{})
	s.resume("user_respond")
	s.settle(c, tools.Result{Content: m.Response}, s.home.env.now())
	s.batchProgress()
}

// resolveHold settles a held call with an error result.
func (s *session) resolveHold(c *call, status events.ApprovalStatus, result string) {
	s.touch()
	h := c.hold
	c.hold = nil
	if !h.question {
		h.timer.Stop()
		s.emit(&eventsv1.ApprovalResolved{ApprovalId: h.id, Status: string(status)})
	}
	s.settle(c, tools.Result{Content: result, IsError: true}, s.home.env.now())
}

// supersede: a new prompt while a run is paused rejects what it waits for
// and ends it, so the prompt starts a run of its own.
func (s *session) supersede() {
	if s.run == nil || s.run.batch == nil {
		return
	}
	for _, c := range s.run.batch.calls {
		if c.held() {
			s.resolveHold(c, events.ApprovalSuperseded, tools.RejectedPrefix+string(events.ApprovalSuperseded))
		}
	}
	s.run.end = events.EndSuperseded
	s.batchProgress()
}

// pause leaves the session idle while its batch waits for a person; the
// results already settled are committed in call order up to the first
// held call, and the store keeps those behind it (Volatile.Settled), so
// all survive a restart.
func (s *session) pause() {
	s.commitSettled(s.run.batch)
	if slices.ContainsFunc(s.run.batch.calls, (*call).uncommitted) {
		s.touch() // the store keeps them (Volatile.Settled)
	}
	if s.machine.Current() != fsm.Idle {
		s.fire(fsm.Finish)
		s.emit(statusIdle)
	}
}

// resume takes a paused run up again when a person answered.
func (s *session) resume(trigger string) {
	if s.machine.Current() != fsm.Idle {
		return
	}
	s.fire(fsm.Resume)
	s.emit(&eventsv1.AgentResumed{Trigger: trigger})
	s.emit(&eventsv1.AgentStatus{Status: string(events.StatusToolCalling), ToolName: toolNames(s.run.batch.toolCalls())})
}

// pending lists what the session waits for a person to answer.
func (s *session) pending() (approvals []*eventsv1.PendingApproval, question *eventsv1.PendingQuestion) {
	approvals = []*eventsv1.PendingApproval{}
	if s.run == nil || s.run.batch == nil {
		return approvals, nil
	}
	for _, c := range s.run.batch.calls {
		switch {
		case !c.held():
		case c.hold.question:
			question = &eventsv1.PendingQuestion{Ref: c.hold.id, Question: c.hold.text, Options: c.hold.options, CallId: c.tc.Id}
		default:
			approvals = append(approvals, &eventsv1.PendingApproval{ApprovalId: c.hold.id, Tool: c.tc.Name, CallId: c.tc.Id,
				Args: &eventsv1.RawJSON{Json: c.args}, Hint: c.hold.hint})
		}
	}
	return approvals, question
}

// restoreRules records again the "always" approvals the store kept.
func (s *session) restoreRules(rules []store.Rule) {
	for _, r := range rules {
		l := s.hooks.keep()
		l.rules = append(l.rules, rule{tool: r.Tool, family: r.CommandFamily})
	}
}
