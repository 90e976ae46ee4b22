package events

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// The enumerations of the protocol (docs/protocol.md). On the wire they
// stay strings, in JSON and in protobuf alike, so that every client keeps
// working; in Go each is a type of its own with its values here, once.
// Convert at the boundary: events.IfBusy(m.IfBusy), string(events.EndAborted).

// IfBusy is what a prompt does while a run is in progress (Prompt.if_busy);
// empty means IfBusyQueue.
type IfBusy string

// Values of Prompt.if_busy.
const (
	IfBusyQueue     IfBusy = "queue"
	IfBusySteer     IfBusy = "steer"
	IfBusyReject    IfBusy = "reject"
	IfBusyInterrupt IfBusy = "interrupt"
	IfBusyRollback  IfBusy = "rollback"
)

// At is when an abort takes effect (Abort.at); empty means AtNow.
type At string

// Values of Abort.at.
const (
	AtNow           At = "now"
	AtAfterResponse At = "after_response"
	AtAfterTools    At = "after_tools"
)

// KillTools is which running tools an abort cancels (Abort.kill_tools);
// empty means KillKillable.
type KillTools string

// Values of Abort.kill_tools.
const (
	KillKillable KillTools = "killable"
	KillAll      KillTools = "all"
	KillNone     KillTools = "none"
)

// QueueMode is how queued prompts reach the model
// (CreateSession.queue_mode); empty means QueueOneAtATime.
type QueueMode string

// Values of CreateSession.queue_mode.
const (
	QueueOneAtATime QueueMode = "one_at_a_time"
	QueueAll        QueueMode = "all"
)

// AgentStatus is what the agent is doing (AgentStatus.status).
type AgentStatus string

// Values of AgentStatus.status.
const (
	StatusIdle        AgentStatus = "idle"
	StatusThinking    AgentStatus = "thinking"
	StatusToolCalling AgentStatus = "tool_calling"
)

// SteeringStatus is what became of a steering message
// (SteeringReceived.status).
type SteeringStatus string

// Values of SteeringReceived.status.
const (
	SteeringAccepted       SteeringStatus = "accepted"
	SteeringRejectedFull   SteeringStatus = "rejected_full"
	SteeringRejectedPlugin SteeringStatus = "rejected_plugin"
)

// EndReason is why a run ended (AgentEnd.reason): one of these, or the
// reason of a plugin that ended it ("limit_reached", "loop_detected").
type EndReason string

// Values of AgentEnd.reason.
const (
	EndCompleted   EndReason = "completed"
	EndAborted     EndReason = "aborted"     // after the last tool that survived the abort
	EndError       EndReason = "error"       // the model failed, or a write before the run was told
	EndRejected    EndReason = "rejected"    // an approval was rejected or timed out
	EndSuperseded  EndReason = "superseded"  // a prompt replaced a run paused for a person
	EndInterrupted EndReason = "interrupted" // the process died in it (agent_recovered)
	EndSkipped     EndReason = "skipped"     // a plugin skipped the request
)

// ApprovalStatus is how a held call was settled (ApprovalResolved.status).
type ApprovalStatus string

// Values of ApprovalResolved.status.
const (
	ApprovalApproved   ApprovalStatus = "approved"
	ApprovalRejected   ApprovalStatus = "rejected"
	ApprovalTimeout    ApprovalStatus = "timeout"
	ApprovalSuperseded ApprovalStatus = "superseded"
)

// enum is one enumeration as a command field: its name and the values a
// client may send, in the order an error lists them.
type enum[T ~string] struct {
	field  string
	values []T
}

var (
	ifBusyValues    = enum[IfBusy]{"if_busy", []IfBusy{IfBusyQueue, IfBusySteer, IfBusyReject, IfBusyInterrupt, IfBusyRollback}}
	atValues        = enum[At]{"at", []At{AtNow, AtAfterResponse, AtAfterTools}}
	killToolsValues = enum[KillTools]{"kill_tools", []KillTools{KillKillable, KillAll, KillNone}}
	queueModeValues = enum[QueueMode]{"queue_mode", []QueueMode{QueueOneAtATime, QueueAll}}
)

// check reports a value that is none of e's, naming the field and the
// values allowed: "at is now, after_response or after_tools, not "x"".
// Empty is allowed: it means the field's default.
func (e enum[T]) check(v string) error {
	if v == "" || slices.Contains(e.values, T(v)) {
		return nil
	}
	names := make([]string, len(e.values))
	for i, n := range e.values {
		names[i] = string(n)
	}
	last := len(names) - 1
	return fmt.Errorf("%s is %s or %s, not %q", e.field, strings.Join(names[:last], ", "), names[last], v)
}

// CheckPrompt reports a prompt option that is not allowed, naming it.
func CheckPrompt(m *eventsv1.Prompt) error {
	if err := ifBusyValues.check(m.IfBusy); err != nil {
		return err
	}
	if m.Traceparent != "" && !validTraceparent(m.Traceparent) {
		return fmt.Errorf("traceparent %q is not a W3C trace context (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>)", m.Traceparent)
	}
	return nil
}

// CheckAbort reports an abort option that is not allowed, naming it.
func CheckAbort(m *eventsv1.Abort) error {
	if err := killToolsValues.check(m.KillTools); err != nil {
		return err
	}
	if err := atValues.check(m.At); err != nil {
		return err
	}
	if m.TimeoutMs < 0 {
		return fmt.Errorf("timeout_ms must not be negative, not %d", m.TimeoutMs)
	}
	return nil
}

// CheckQueueMode reports a queue_mode that is not allowed, naming it.
func CheckQueueMode(mode QueueMode) error {
	return queueModeValues.check(string(mode))
}

// validTraceparent reports whether s is a W3C traceparent value with a
// valid trace and span id.
func validTraceparent(s string) bool {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": s})
	return trace.SpanContextFromContext(ctx).IsValid()
}
