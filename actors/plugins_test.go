package actors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/approval"
	"github.com/tack-run/tack/plugins/askuser"
	"github.com/tack-run/tack/plugins/limits"
	"github.com/tack-run/tack/plugins/loopdetect"
	"github.com/tack-run/tack/plugins/offload"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/workspace"
)

// newPluginHarness starts a session on scriptJSON with the demo tools,
// the plugins ps and the tools they bring.
func newPluginHarness(t *testing.T, scriptJSON string, env *Env, ps ...plugins.Plugin) *harness {
	t.Helper()
	if env == nil {
		env = &Env{}
	}
	var extra []tools.Tool
	for _, p := range ps {
		if tp, ok := p.(plugins.ToolProvider); ok {
			extra = append(extra, tp.Tools()...)
		}
	}
	sys := newSystem(t)
	return spawnSpec(t, sys, newPlace(sys, env, nil), Spec{ID: "s1", Model: scriptModel(t, "", scriptJSON), Tools: demoSet(t, extra...), Plugins: ps, Stored: &spec.Session{System: "be brief"}})
}

// plugin builds a built-in plugin from its factory and JSON config.
func plugin(t *testing.T, f plugins.Factory, config string) plugins.Plugin {
	t.Helper()
	p, err := f(json.RawMessage(config))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// echoThenDone calls echo once, then answers.
const echoThenDone = `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"hi"}}]},{"text":"done"}]}`

// Building blocks of approval sequences.
var (
	toolTurn = one("state_changed", "message_start", "response_complete", "message_committed", "token_usage",
		"tool_calls", "state_changed", "agent_status", "tool_execution_start")
	paused     = one("approval_required", "state_changed", "agent_status")
	toolEnded  = one("tool_execution_end", "tool_execution_metrics", "message_committed", "turn_end")
	resumedRun = one("state_changed", "agent_resumed", "agent_status")
)

func TestApprovalApproveResumesTheRun(t *testing.T) {
	h := newPluginHarness(t, echoThenDone, nil, plugin(t, approval.New, `{"tools":["echo"]}`))
	h.ok(&eventsv1.Prompt{Text: "go"})
	req := h.waitFor("approval_required", 1).GetApprovalRequired()
	h.waitState("idle", 1)
	st := h.state()
	if st.State != "idle" || st.GetRunId() != "r-1" || len(st.PendingApprovals) != 1 || st.PendingApprovals[0].ApprovalId != req.ApprovalId {
		t.Fatalf("state while pending: %v", st)
	}
	h.fails(&eventsv1.Approve{ApprovalId: "ap-9"}, "no_pending_approval")
	h.ok(&eventsv1.Approve{ApprovalId: req.ApprovalId})
	h.waitFor("agent_end", 1)
	h.expect(seq(one("session_created"), runStart, toolTurn, paused,
		one("approval_resolved"), resumedRun, toolEnded, nextTurn, answer, runEnd)...)
	if got := h.waitFor("agent_resumed", 1).GetAgentResumed().Trigger; got != "tool_approved" {
		t.Fatalf("trigger %q", got)
	}
	if msgs := h.history(); msgs[2].Content != "hi" {
		t.Fatalf("the approved call's result: %q", msgs[2].Content)
	}
}

func TestApprovalAlwaysRecordsARule(t *testing.T) {
	h := newPluginHarness(t, `{"turns":[
		{"tool_calls":[{"name":"echo","args":{"text":"a"}}]},{"text":"one"},
		{"tool_calls":[{"name":"echo","args":{"text":"b"}}]},{"text":"two"}]}`,
		nil, plugin(t, approval.New, `{"tools":["echo"]}`))
	h.ok(&eventsv1.Prompt{Text: "first"})
	h.ok(&eventsv1.Approve{ApprovalId: h.waitFor("approval_required", 1).GetApprovalRequired().ApprovalId, Always: true})
	always := h.waitFor("tool_approved_always", 1).GetToolApprovedAlways()
	if always.Tool != "echo" || always.CommandFamily != nil {
		t.Fatalf("tool_approved_always = %v", always)
	}
	h.waitFor("agent_end", 1)
	h.ok(&eventsv1.Prompt{Text: "second"})
	h.waitFor("agent_end", 2)
	if n := len(eventsOf(h, "approval_required")); n != 1 {
		t.Fatalf("%d approvals asked, want 1: the rule covers the second call", n)
	}
	h.history()
}

func TestApprovalRejectEndsTheRun(t *testing.T) {
	h := newPluginHarness(t, echoThenDone, nil, plugin(t, approval.New, `{"tools":["echo"]}`))
	h.ok(&eventsv1.Prompt{Text: "go"})
	id := h.waitFor("approval_required", 1).GetApprovalRequired().ApprovalId
	h.waitState("idle", 1)
	h.ok(&eventsv1.Reject{ApprovalId: id, Reason: "not now"})
	end := h.waitFor("agent_end", 1).GetAgentEnd()
	h.expect(seq(one("session_created"), runStart, toolTurn, paused,
		one("approval_resolved"), toolEnded, one("agent_end"))...)
	if end.Reason != "rejected" {
		t.Fatalf("agent_end reason %q", end.Reason)
	}
	if msgs := h.history(); msgs[2].Content != "rejected: not now" || !msgs[2].IsError {
		t.Fatalf("result %v", msgs[2])
	}
	if st := h.state(); st.State != "idle" || st.RunId != nil || len(st.PendingApprovals) != 0 {
		t.Fatalf("state %v", st)
	}
}

func TestApprovalRejectWithAutoResume(t *testing.T) {
	h := newPluginHarness(t, echoThenDone, nil, plugin(t, approval.New, `{"tools":["echo"],"auto_resume":true}`))
	h.ok(&eventsv1.Prompt{Text: "go"})
	id := h.waitFor("approval_required", 1).GetApprovalRequired().ApprovalId
	h.waitState("idle", 1)
	h.ok(&eventsv1.Reject{ApprovalId: id})
	h.waitFor("agent_end", 1)
	h.expect(seq(one("session_created"), runStart, toolTurn, paused,
		one("approval_resolved", "tool_execution_end", "tool_execution_metrics"), resumedRun,
		one("message_committed", "turn_end"), nextTurn, answer, runEnd)...)
	if got := h.waitFor("agent_resumed", 1).GetAgentResumed().Trigger; got != "tool_rejected" {
		t.Fatalf("trigger %q", got)
	}
}

func TestApprovalTimesOut(t *testing.T) {
	h := newPluginHarness(t, echoThenDone, nil, plugin(t, approval.New, `{"tools":["echo"],"timeout_ms":30}`))
	h.ok(&eventsv1.Prompt{Text: "go"})
	end := h.waitFor("agent_end", 1).GetAgentEnd()
	if got := h.waitFor("approval_resolved", 1).GetApprovalResolved().Status; got != "timeout" || end.Reason != "rejected" {
		t.Fatalf("status %q, end %q", got, end.Reason)
	}
	if msgs := h.history(); msgs[2].Content != "rejected: approval timed out" {
		t.Fatalf("result %q", msgs[2].Content)
	}
}

func TestApprovalSupersededByAPrompt(t *testing.T) {
	h := newPluginHarness(t, `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"hi"}}]},{"text":"fresh"}]}`,
		nil, plugin(t, approval.New, `{"tools":["echo"]}`))
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("approval_required", 1)
	h.waitState("idle", 1)
	h.ok(&eventsv1.Prompt{Text: "never mind"})
	h.waitFor("agent_end", 2)
	h.expect(seq(one("session_created"), runStart, toolTurn, paused,
		one("approval_resolved"), toolEnded, one("agent_end"), runStart, answer, runEnd)...)
	if got := h.waitFor("approval_resolved", 1).GetApprovalResolved().Status; got != "superseded" {
		t.Fatalf("status %q", got)
	}
	if got := h.waitFor("agent_end", 1).GetAgentEnd().Reason; got != "superseded" {
		t.Fatalf("first run ended %q", got)
	}
	h.history()
}

func TestAbortWhileApprovalPending(t *testing.T) {
	h := newPluginHarness(t, echoThenDone, nil, plugin(t, approval.New, `{"tools":["echo"]}`))
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("approval_required", 1)
	h.waitState("idle", 1)
	h.ok(&eventsv1.Abort{})
	h.waitFor("agent_end", 1)
	h.expect(seq(one("session_created"), runStart, toolTurn, paused,
		one("agent_abort", "approval_resolved"), toolEnded, one("agent_end"))...)
	if got := h.waitFor("approval_resolved", 1).GetApprovalResolved().Status; got != "rejected" {
		t.Fatalf("status %q", got)
	}
	if msgs := h.history(); msgs[2].Content != "rejected: aborted" {
		t.Fatalf("result %q", msgs[2].Content)
	}
	if got := h.waitFor("agent_end", 1).GetAgentEnd().Reason; got != "aborted" {
		t.Fatalf("reason %q", got)
	}
}

// An approval can be answered while the rest of its batch still runs; the
// session never pauses then.
func TestApprovalWhileTheBatchRuns(t *testing.T) {
	g := newGate()
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1",
		Model: scriptModel(t, "", `{"turns":[{"tool_calls":[{"name":"hold","args":{}},{"name":"echo","args":{"text":"hi"}}]},{"text":"done"}]}`),
		Tools: demoSet(t, holdTool("hold", tools.Killable, g)), Plugins: []plugins.Plugin{plugin(t, approval.New, `{"tools":["echo"]}`)}})
	h.ok(&eventsv1.Prompt{Text: "go"})
	id := h.waitFor("approval_required", 1).GetApprovalRequired().ApprovalId
	if st := h.state(); st.State != "executing_tools" || len(st.PendingApprovals) != 1 || len(st.RunningTools) != 1 {
		t.Fatalf("state %v", st)
	}
	h.ok(&eventsv1.Approve{ApprovalId: id})
	h.waitToolEnd(h.waitFor("approval_required", 1).GetApprovalRequired().CallId)
	g.open()
	h.waitFor("agent_end", 1)
	if n := len(eventsOf(h, "agent_resumed")); n != 0 {
		t.Fatalf("the session paused although the batch was running (%d agent_resumed)", n)
	}
	if got := contents(h.history()); len(got) != 5 || got[3] != "tool:hi" {
		t.Fatalf("history %q", got)
	}
}

func TestLoopDetectionInterveneThenAbort(t *testing.T) {
	h := newPluginHarness(t, `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"same"}}]}],"when_exhausted":"repeat_last"}`,
		nil, plugin(t, loopdetect.New, `{"threshold":3,"abort_at":5}`))
	h.ok(&eventsv1.Prompt{Text: "loop"})
	end := h.waitFor("agent_end", 1).GetAgentEnd()
	if end.Reason != "loop_detected" {
		t.Fatalf("reason %q", end.Reason)
	}
	var counts []int32
	for _, ev := range eventsOf(h, "loop_detected") {
		counts = append(counts, ev.GetLoopDetected().Count)
	}
	if got := len(eventsOf(h, "intervention")); len(counts) != 3 || counts[0] != 3 || counts[2] != 5 || got != 2 {
		t.Fatalf("loop_detected counts %v, interventions %d", counts, got)
	}
	if abort := h.waitFor("agent_abort", 1).GetAgentAbort(); abort.Reason != "loop_detected" {
		t.Fatalf("agent_abort %v", abort)
	}
	msgs := h.history()
	var told bool
	for _, m := range msgs {
		told = told || (m.Role == "user" && strings.Contains(m.Content, "same arguments"))
	}
	if !told {
		t.Fatalf("the model was never told of the loop: %q", contents(msgs))
	}
}

func TestLargeResultOffloaded(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("0123456789", 20)
	h := newPluginHarness(t, `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"`+big+`"}}]},{"text":"ok"}]}`,
		&Env{Workspace: workspace.Shared(dir)}, plugin(t, offload.New, `{"threshold_tokens":10,"head_chars":8,"tail_chars":8}`))
	h.ok(&eventsv1.Prompt{Text: "big"})
	h.waitFor("agent_end", 1)
	off := h.waitFor("large_result_offloaded", 1).GetLargeResultOffloaded()
	// In the session's workspace, where its file tools and shell find it.
	data, err := os.ReadFile(filepath.Join(dir, off.Path))
	if err != nil || string(data) != big || off.Bytes != int64(len(big)) {
		t.Fatalf("offloaded file %q (%v), event %v", data, err, off)
	}
	res := h.history()[2].Content
	if !strings.HasPrefix(res, big[:8]) || !strings.HasSuffix(res, big[len(big)-8:]) || !strings.Contains(res, off.Path) {
		t.Fatalf("committed result %q", res)
	}
}

func TestLimitsEndTheRunCleanly(t *testing.T) {
	cases := []struct {
		name, config, message string
	}{
		{"max_turns", `{"max_turns":2}`, "max_turns of 2"},
		{"max_run_tokens", `{"max_run_tokens":25}`, "max_run_tokens"},
		{"max_session_tokens", `{"max_session_tokens":25}`, "max_session_tokens"},
		{"max_run_cost_usd", `{"max_run_cost_usd":0.000001}`, "max_run_cost_usd"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			model := scriptModel(t, "", `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"x"}}],"usage":{"input_tokens":10,"output_tokens":5}}]}`)
			model.Cost.Input = 1
			env := &Env{}
			sys := newSystem(t)
			h := spawnSpec(t, sys, newPlace(sys, env, nil), Spec{ID: "s1", Model: model, Tools: demoSet(t),
				Plugins: []plugins.Plugin{plugin(t, limits.New, c.config)}})
			h.ok(&eventsv1.Prompt{Text: "spend"})
			end := h.waitFor("agent_end", 1).GetAgentEnd()
			errEv := h.waitFor("error", 1).GetError()
			if end.Reason != "limit_reached" || errEv.Code != "limit_reached" || !strings.Contains(errEv.Message, c.message) {
				t.Fatalf("agent_end %v, error %v", end, errEv)
			}
			h.history()
		})
	}
}

func TestAskUserAndRespond(t *testing.T) {
	h := newPluginHarness(t, `{"turns":[
		{"tool_calls":[{"name":"ask_user","args":{"question":"Which file?","options":["a.go","b.go"]}}]},
		{"text":"editing b.go"}]}`, nil, plugin(t, askuser.New, `{}`))
	h.ok(&eventsv1.Prompt{Text: "edit"})
	q := h.waitFor("ask_user", 1).GetAskUser()
	h.waitState("idle", 1)
	if st := h.state(); st.GetPendingQuestion().GetRef() != q.Ref || len(q.Options) != 2 {
		t.Fatalf("state %v, question %v", st, q)
	}
	h.fails(&eventsv1.Respond{Ref: "q-99", Response: "x"}, "no_pending_question")
	h.ok(&eventsv1.Respond{Ref: q.Ref, Response: "b.go"})
	h.waitFor("agent_end", 1)
	h.expect(seq(one("session_created"), runStart, toolTurn,
		one("ask_user", "state_changed", "agent_status", "user_responded"), resumedRun,
		toolEnded, nextTurn, answer, runEnd)...)
	if got := h.waitFor("agent_resumed", 1).GetAgentResumed().Trigger; got != "user_respond" {
		t.Fatalf("trigger %q", got)
	}
	if msgs := h.history(); msgs[2].Content != "b.go" || msgs[2].IsError {
		t.Fatalf("answer %v", msgs[2])
	}
}

// misbehaving plugins: one panics, one blocks past the budget.
type misbehaving struct {
	name    string
	release chan struct{}
}

func (m *misbehaving) Name() string          { return m.name }
func (m *misbehaving) Priority() int         { return 10 }
func (m *misbehaving) Hooks() []plugins.Hook { return []plugins.Hook{plugins.BeforeRequest} }
func (m *misbehaving) Handle(*plugins.Event) []plugins.Action {
	if m.release == nil {
		panic("boom")
	}
	<-m.release
	return nil
}

func TestMisbehavingPluginsAreDisabled(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	h := newPluginHarness(t, `{"turns":[{"text":"fine"}]}`, &Env{Settings: Settings{PluginBudget: 20 * time.Millisecond}},
		&misbehaving{name: "panicky"}, &misbehaving{name: "slow", release: release})
	h.ok(&eventsv1.Prompt{Text: "hi"})
	h.waitFor("agent_end", 1)
	errs := eventsOf(h, "error")
	if len(errs) != 2 || !strings.Contains(errs[0].GetError().Message, "panicky") || !strings.Contains(errs[1].GetError().Message, "slow") {
		t.Fatalf("errors %v", errs)
	}
	h.ok(&eventsv1.Prompt{Text: "again"})
	h.waitFor("agent_end", 2)
	if n := len(eventsOf(h, "error")); n != 2 {
		t.Fatalf("a disabled plugin was asked again: %d errors", n)
	}
	if got := contents(h.history()); len(got) != 4 {
		t.Fatalf("history %q", got)
	}
}

// eventsOf returns the recorded events of one type.
func eventsOf(h *harness, name string) []*eventsv1.Event {
	var out []*eventsv1.Event
	for _, ev := range h.rec.Events() {
		if events.Type(ev) == name {
			out = append(out, ev)
		}
	}
	return out
}

// TestSteerWhileApprovalPending: a steer while the run is paused behaves
// as a prompt — it supersedes the approval and starts a run of its own.
func TestSteerWhileApprovalPending(t *testing.T) {
	h := newPluginHarness(t, `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"hi"}}]},{"text":"steered"}]}`,
		nil, plugin(t, approval.New, `{"tools":["echo"]}`))
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("approval_required", 1)
	h.waitState("idle", 1)
	if ref := h.ok(&eventsv1.Steer{Text: "do something else"}).GetSteer().GetRef(); ref == "" {
		t.Fatal("the steer got no ref")
	}
	h.waitFor("agent_end", 2)
	if got := h.waitFor("approval_resolved", 1).GetApprovalResolved().Status; got != "superseded" {
		t.Fatalf("status %q", got)
	}
	if got := contents(h.history()); got[len(got)-2] != "user:do something else" || got[len(got)-1] != "assistant:steered" {
		t.Fatalf("history %q", got)
	}
}

// TestOneQuestionAtATime: a response that asks two questions gets the
// first asked and the second an error result telling the model to ask
// one at a time: a session waits on one question (get_state's
// pending_question, the store's), and a restore lost the first of two.
func TestOneQuestionAtATime(t *testing.T) {
	h := newPluginHarness(t, `{"turns":[
		{"tool_calls":[{"name":"ask_user","args":{"question":"A?"}},{"name":"ask_user","args":{"question":"B?"}}]},
		{"text":"done"}]}`, nil, plugin(t, askuser.New, `{}`))
	h.ok(&eventsv1.Prompt{Text: "go"})
	q := h.waitFor("ask_user", 1).GetAskUser()
	h.waitState("idle", 1)
	if q.Question != "A?" || h.state().GetPendingQuestion().GetRef() != q.Ref {
		t.Fatalf("question %v, state %v", q, h.state())
	}
	h.ok(&eventsv1.Respond{Ref: q.Ref, Response: "yes"})
	h.waitFor("agent_end", 1)
	if n := len(eventsOf(h, "ask_user")); n != 1 {
		t.Fatalf("%d questions asked", n)
	}
	msgs := h.history()
	if msgs[2].Content != "yes" || !msgs[3].IsError || msgs[3].Content != "question "+q.Ref+" waits for its answer: ask one question at a time" {
		t.Fatalf("results %v, %v", msgs[2], msgs[3])
	}
}
