package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Config is what a session was created with. Batch.Config replaces it as a
// whole (switch_model, tools attached or detached).
type Config struct {
	// Model is the model name the next request uses.
	Model string
	// User is the user the session belongs to (the HTTP server's caller),
	// "" for sessions made without one (tack rpc, tack chat). Create sets
	// it; it never changes after: Batch.Config leaves it as it is.
	User string
	// Spec is the rest of the session's settings (its system prompt,
	// tools, plugins, inline script, context, sub-agent and queue options)
	// as one JSON object, which package spec writes and reads
	// (spec.Session.Stored, spec.FromStored). The store keeps it verbatim
	// and checks only that it is a JSON object; nil when there is none.
	Spec json.RawMessage
}

// Session is a stored session record: everything but the history and the
// volatile state, cheap enough to list by the thousand.
type Session struct {
	// ID is the session id.
	ID string
	// Config is the session's current configuration.
	Config Config
	// State is the FSM state recorded by the last Apply ("idle" after
	// Create). A session found in a busy state after a restart was
	// interrupted by the crash.
	State string
	// MessageCount is the length of the stored history: the index the next
	// committed message gets.
	MessageCount int
	// HistoryStart is where the working history starts: the messages
	// before it are the ones compaction replaced, kept for get_messages
	// with all; 0 until a compaction.
	HistoryStart int
	// Title is the session's title as the last Batch.Title set it; "" until
	// one does.
	Title string
	// Usage is the session's usage totals; never nil.
	Usage *eventsv1.Usage
	// EventSeq is the event sequence number recorded by the last Apply that
	// set it, so a restored session can continue numbering after it.
	EventSeq uint64
	// Owner is the node holding the ownership lease, empty when none has
	// ever been taken or it was released; LeaseExpires says when it lapses.
	// An Owner whose lease has expired still holds it until another owner
	// acquires it.
	Owner        string
	LeaseExpires time.Time
	// CreatedAt and UpdatedAt are set by the store's clock, in UTC with
	// microsecond precision. Every Apply moves UpdatedAt.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Snapshot is a session as Get and Load return it: the record, its
// volatile state and, from Load only, its history.
type Snapshot struct {
	Session
	// Volatile is the session's current volatile state.
	Volatile Volatile
	// Messages is the whole committed history, in index order (nil from
	// Get): from HistoryStart on, the working history.
	Messages []*eventsv1.Message
}

// Volatile is the part of a session that is not history and changes often:
// queues, pending approvals and question, approval-always rules, todos. It is
// stored as one value, replaced as a whole by Batch.Volatile.
type Volatile struct {
	// PromptQueue holds prompts waiting for the current run to end.
	PromptQueue []string
	// PromptImages holds the images of the queued prompts, by their index
	// in PromptQueue; it may be shorter (the prompts past its end have
	// none), and is nil when no queued prompt has images.
	PromptImages [][]*eventsv1.Image
	// SteeringImages holds the images of the queued steering messages, by
	// their ref; nil when none has images.
	SteeringImages map[string][]*eventsv1.Image
	// SteeringQueue holds accepted steering messages with their refs.
	SteeringQueue []*eventsv1.SteeringItem
	// Approvals are the tool calls held for approval, in request order.
	Approvals []Approval
	// Question is the pending ask_user question, nil when none.
	Question *Question
	// Rules are the approval-always rules recorded by approve(always).
	Rules []Rule
	// RunID is the run in progress when the state was stored, "" if none.
	RunID string
	// Counters keep run, steering and hold ids unique across restarts.
	Counters Counters
	// SubagentUsage is the part of the session's usage totals that its
	// sub-agents spent; nil when no sub-agent ran.
	SubagentUsage *eventsv1.Usage
	// ModelState is what the session's model provider keeps per session
	// (llm.Stateful), opaque to the store; nil when it keeps nothing.
	ModelState []byte
	// Todos is the todo list as the todo_write tool last wrote it.
	Todos []*eventsv1.Todo
	// DetachedTools names tools detach_tools took out that the session's
	// configuration brings without naming them in Config.Tools (a scripted
	// model's demo tools, its plugins' tools): a restore leaves them out.
	DetachedTools []string
	// Settled holds the results of a paused batch's calls that came back
	// while an earlier call of the batch waits for a person: the history
	// takes a batch's results in the order the model listed the calls, so
	// these wait here until the calls before them are answered.
	Settled []Settled
	// RunEnd is the reason the run in progress ends with once its batch
	// is done (a rejected approval that does not resume it); "" when it
	// goes on.
	RunEnd string
	// ContextUsed is the input tokens of the session's last request, how
	// full its context is (get_state's context.used); TokenScale is what
	// the provider reported for that request over the estimate at 4
	// characters a token, 0 until one reported.
	ContextUsed int64
	TokenScale  float64
	// Unstarted marks a session that was made but has not started yet —
	// one import_session made, or one a runtime that parks its sessions
	// made parked (tack.WithPassivateAfter without a store): its first
	// start is a new session's (session_created, events from 1, the
	// history as it was given), not a restore's. The session's first
	// write (or its parking) clears it. It is stored as the field
	// "imported", its name when only imports had it.
	Unstarted bool
}

// Settled is the result of a tool call that waits to be committed.
type Settled struct {
	CallID  string
	Content string
	IsError bool
}

// Counters are a session's id counters: runs (r-N), steering refs (st-N),
// holds (ap-N, q-N) and sub-agents (<session>/sub-N).
type Counters struct {
	Runs, Steers, Holds, Subagents uint64
}

// Approval is a pending approval and when it times out.
type Approval struct {
	// Pending is the approval as get_state shows it.
	Pending *eventsv1.PendingApproval
	// Deadline is when it times out as rejected; zero means never.
	Deadline time.Time
	// Family is the command family an "always" approval would record.
	Family string
	// Hint is the description approval_required gave.
	Hint string
	// AutoResume continues the run after a rejection.
	AutoResume bool
}

// Question is a pending ask_user question and when it times out.
type Question struct {
	// Pending is the question as get_state shows it.
	Pending *eventsv1.PendingQuestion
	// Deadline is when it times out; zero means never.
	Deadline time.Time
}

// Rule is an approval-always rule: calls of Tool (and, when CommandFamily
// is set, only shell commands of that family) are not asked again.
type Rule struct {
	Tool          string
	CommandFamily string
}

// Validate reports a malformed configuration as ErrInvalid: settings
// that are not a JSON object in UTF-8, a model or user that is not UTF-8
// text without NUL bytes (PostgreSQL text cannot hold them).
func (c *Config) Validate() error {
	if len(c.Spec) > 0 && (!utf8.Valid(c.Spec) || !isObject(c.Spec)) {
		return fmt.Errorf("%w: the session's settings are not a JSON object", ErrInvalid)
	}
	if err := CheckText("model", c.Model); err != nil {
		return err
	}
	return CheckText("user", c.User)
}

// isObject reports whether b is one JSON object.
func isObject(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(b)
}

// CheckText reports text every store can keep — UTF-8 without NUL bytes —
// as nil, and anything else as ErrInvalid naming what.
func CheckText(what, s string) error {
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%w: %s %q is not UTF-8 text without NUL bytes", ErrInvalid, what, s)
	}
	return nil
}
