package actors

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/spec"
)

// TestTrimmedRequests: with context.max_messages, each request carries the
// system prompt and the newest messages, moved back to keep a batch's
// call with its results; request_start.message_count tells how many; the
// history itself keeps everything.
func TestTrimmedRequests(t *testing.T) {
	sent := &sentRequests{}
	model := scriptModel(t, "", `{"turns":[
		{"tool_calls":[{"name":"echo","args":{"text":"a"}},{"name":"echo","args":{"text":"b"}}]},
		{"text":"one"},
		{"text":"two"}]}`)
	model.Provider = &checkedProvider{Provider: model.Provider, sent: sent}
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{
		ID: "s1", Model: model, Tools: demoSet(t), Stored: &spec.Session{System: "be brief", Context: &llm.ContextConfig{MaxMessages: 2}},
	})
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.waitFor("agent_end", 1)
	h.ok(&eventsv1.Prompt{Text: "p2"})
	h.waitFor("agent_end", 2)

	var counts []int32
	for _, ev := range findAll(h.rec.Events(), "request_start") {
		counts = append(counts, ev.GetRequestStart().MessageCount)
	}
	if want := []int32{1, 3, 2}; !slices.Equal(counts, want) {
		t.Fatalf("request_start.message_count = %v, want %v", counts, want)
	}
	want := [][]string{
		{"user:p1"},
		{"assistant:", "tool:a", "tool:b"},
		{"assistant:one", "user:p2"},
	}
	for i, req := range sent.reqs {
		if got := contents(req.Messages); !slices.Equal(got, want[i]) || req.System != "be brief" {
			t.Errorf("request %d: system %q, messages %q, want %q", i+1, req.System, got, want[i])
		}
	}
	if got := contents(h.history()); !slices.Equal(got, []string{"user:p1", "assistant:", "tool:a", "tool:b", "assistant:one", "user:p2", "assistant:two"}) {
		t.Fatalf("history %q", got)
	}
}

// contextHarness starts a session on scriptJSON with context options cfg
// and plugins ps; wrap, when set, wraps the script's provider.
func contextHarness(t *testing.T, scriptJSON string, cfg *llm.ContextConfig, wrap func(llm.Provider) llm.Provider, ps ...plugins.Plugin) (*harness, *sentRequests) {
	t.Helper()
	sent := &sentRequests{}
	model := scriptModel(t, "", scriptJSON)
	p := model.Provider
	if wrap != nil {
		p = wrap(p)
	}
	model.Provider = &checkedProvider{Provider: p, sent: sent}
	sys := newSystem(t)
	return spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1", Model: model,
		Tools: demoSet(t), Plugins: ps, Stored: &spec.Session{System: "be brief", Context: cfg}}), sent
}

// TestCompactCommand: compact in idle replaces all but the newest
// keep_recent messages, cut at a turn boundary, with the model's summary;
// get_messages with all still returns every message, the replaced ones
// marked compacted; the next request carries the summary.
func TestCompactCommand(t *testing.T) {
	h, sent := contextHarness(t, `{"turns":[{"text":"a1"},{"text":"a2"},{"text":"a3"},{"text":"p1 and p2 were answered."},{"text":"a4"}]}`,
		&llm.ContextConfig{KeepRecent: new(2)}, nil)
	for i, p := range []string{"p1", "p2", "p3"} {
		h.ok(&eventsv1.Prompt{Text: p})
		h.waitFor("agent_end", i+1)
	}
	n := h.rec.Len()
	h.ok(&eventsv1.Compact{})
	end := h.waitFor("compact_end", 1)
	h.expect(append(h.rec.Types()[:n], "compact_start", "compact_end")...)
	if got := end.GetCompactEnd().RemovedCount; got != 4 {
		t.Fatalf("removed_count = %d, want 4", got)
	}
	want := []string{"user:" + SummaryPrefix + "p1 and p2 were answered.", "user:p3", "assistant:a3"}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
	if !h.history()[0].Summary {
		t.Fatal("the summary is not marked summary")
	}
	summaryReq := sent.reqs[3]
	if summaryReq.System != SummarisePrompt || len(summaryReq.Messages) != 1 ||
		summaryReq.Messages[0].Content != "user: p1\nassistant: a1\nuser: p2\nassistant: a2\n" {
		t.Fatalf("summary request: %q %q", summaryReq.System, contents(summaryReq.Messages))
	}
	all := h.ok(&eventsv1.GetMessages{All: true}).GetMessages().GetMessages()
	var marks []string
	for _, m := range all {
		marks = append(marks, fmt.Sprintf("%s:%s:%v", m.Role, m.Content, m.Compacted))
	}
	wantAll := []string{"user:p1:true", "assistant:a1:true", "user:p2:true", "assistant:a2:true",
		"user:" + want[0][len("user:"):] + ":false", "user:p3:false", "assistant:a3:false"}
	if !slices.Equal(marks, wantAll) {
		t.Fatalf("all messages %q, want %q", marks, wantAll)
	}
	h.ok(&eventsv1.Prompt{Text: "p4"})
	h.waitFor("agent_end", 4)
	if got := contents(sent.reqs[4].Messages); !slices.Equal(got, append(want, "user:p4")) {
		t.Fatalf("request after compaction: %q", got)
	}
}

// TestCompactAtPercent: a response whose context_percent reaches
// compact_at_percent compacts at the run's next turn gap, before the next
// request; the run goes on with the compacted history.
func TestCompactAtPercent(t *testing.T) {
	h, sent := contextHarness(t, `{"context_window":100,"turns":[
		{"tool_calls":[{"name":"echo","args":{"text":"x"}}],"usage":{"input_tokens":90,"output_tokens":1}},
		{"text":"the user asked p1"},
		{"text":"done","usage":{"input_tokens":10,"output_tokens":1}}]}`,
		&llm.ContextConfig{CompactAtPercent: 80, KeepRecent: new(2)}, nil)
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.waitFor("agent_end", 1)
	var tail []string
	types := h.rec.Types()
	for i, ty := range types {
		if ty == "compact_start" {
			tail = types[i-3 : i+3]
		}
	}
	if !slices.Equal(tail, []string{"turn_end", "state_changed", "agent_status", "compact_start", "compact_end", "turn_start"}) {
		t.Fatalf("events around the compaction: %q", tail)
	}
	if got := contents(sent.reqs[2].Messages); !slices.Equal(got, []string{"user:" + SummaryPrefix + "the user asked p1", "assistant:", "tool:x"}) {
		t.Fatalf("request after the compaction: %q", got)
	}
	if got := h.waitFor("compact_end", 1).GetCompactEnd().RemovedCount; got != 1 {
		t.Fatalf("removed_count = %d, want 1", got)
	}
}

// smallWindow fails, as a context overflow, every request but a summary's
// that carries more than n messages: a model with a small window.
func smallWindow(n int) func(llm.Provider) llm.Provider {
	return func(p llm.Provider) llm.Provider {
		return llmtest.ProviderFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
			if req.System != SummarisePrompt && len(req.Messages) > n {
				return nil, &llm.Error{Status: 400, Message: "maximum context length exceeded", Overflow: true}
			}
			return p.Stream(ctx, req, emit)
		})
	}
}

// TestOverflowCompactsAndRetries: a context overflow compacts the history
// and sends the request again; when it still overflows, the run ends with
// an error context_overflow.
func TestOverflowCompactsAndRetries(t *testing.T) {
	h, sent := contextHarness(t, `{"turns":[{"text":"a1"},{"text":"a2"},{"text":"summary"},{"text":"a3"}]}`,
		&llm.ContextConfig{KeepRecent: new(1)}, smallWindow(3))
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.waitFor("agent_end", 1)
	h.ok(&eventsv1.Prompt{Text: "p2"})
	h.waitFor("agent_end", 2)
	n := h.rec.Len()
	h.ok(&eventsv1.Prompt{Text: "p3"}) // 5 messages: overflows
	end := h.waitFor("agent_end", 3)
	if r := end.GetAgentEnd().Reason; r != string(events.EndCompleted) {
		t.Fatalf("run ended %s", r)
	}
	eventstest.ExpectTypes(t, h.since(n), "prompt_received", "agent_start", "message_committed", "state_changed", "agent_status",
		"turn_start", "request_start", "context_overflow", "turn_end", "compact_start", "compact_end",
		"turn_start", "request_start", "state_changed", "message_start", "message_delta", "response_complete", "message_committed",
		"token_usage", "turn_end", "state_changed", "agent_status", "agent_end")
	if got := contents(sent.reqs[len(sent.reqs)-1].Messages); !slices.Equal(got, []string{"user:" + SummaryPrefix + "summary", "user:p3"}) {
		t.Fatalf("the retried request: %q", got)
	}

	// keep_recent 10 leaves nothing to compact: the overflow is an error.
	h2, _ := contextHarness(t, `{"turns":[{"text":"a1"},{"text":"a2"}]}`, &llm.ContextConfig{}, smallWindow(2))
	h2.ok(&eventsv1.Prompt{Text: "p1"})
	h2.waitFor("agent_end", 1)
	h2.ok(&eventsv1.Prompt{Text: "p2"})
	if r := h2.waitFor("agent_end", 2).GetAgentEnd().Reason; r != string(events.EndError) {
		t.Fatalf("run ended %s, want error", r)
	}
	errs := findAll(h2.rec.Events(), "error")
	if len(errs) != 1 || errs[0].GetError().Code != "context_overflow" {
		t.Fatalf("errors %v", errs)
	}
}

// vetoSummary answers before_compact: skip (veto), or replace the summary.
type vetoSummary struct{ replace string }

func (v *vetoSummary) Name() string          { return "veto" }
func (v *vetoSummary) Priority() int         { return 10 }
func (v *vetoSummary) Hooks() []plugins.Hook { return []plugins.Hook{plugins.BeforeCompact} }
func (v *vetoSummary) Handle(ev *plugins.Event) []plugins.Action {
	if v.replace != "" {
		return []plugins.Action{{Kind: plugins.ReplaceSummary, Text: v.replace + " (was: " + ev.Text + ")"}}
	}
	return []plugins.Action{{Kind: plugins.Skip, Reason: "keep everything"}}
}

// TestBeforeCompact: a plugin vetoes a compaction (the history stays as
// it was, removed_count 0) or rewrites its summary.
func TestBeforeCompact(t *testing.T) {
	for _, tc := range []struct {
		name    string
		plugin  *vetoSummary
		removed int32
		want    []string
	}{
		{"veto", &vetoSummary{}, 0, []string{"user:p1", "assistant:a1"}},
		{"rewrite", &vetoSummary{replace: "mine"}, 2, []string{"user:" + SummaryPrefix + "mine (was: sum)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := contextHarness(t, `{"turns":[{"text":"a1"},{"text":"sum"}]}`, &llm.ContextConfig{KeepRecent: new(0)}, nil, tc.plugin)
			h.ok(&eventsv1.Prompt{Text: "p1"})
			h.waitFor("agent_end", 1)
			h.ok(&eventsv1.Compact{})
			if got := h.waitFor("compact_end", 1).GetCompactEnd().RemovedCount; got != tc.removed {
				t.Fatalf("removed_count %d, want %d", got, tc.removed)
			}
			if got := contents(h.history()); !slices.Equal(got, tc.want) {
				t.Fatalf("history %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCompactionModelFails: a summary request that fails leaves the
// history as it was, says so with an error event, and the session works.
func TestCompactionModelFails(t *testing.T) {
	h, _ := contextHarness(t, `{"turns":[{"text":"a1"},{"error":{"status":500,"message":"down"}},{"text":"a2"}]}`, &llm.ContextConfig{KeepRecent: new(0)}, nil)
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.waitFor("agent_end", 1)
	n := h.rec.Len()
	h.ok(&eventsv1.Compact{})
	h.waitFor("compact_end", 1)
	eventstest.ExpectTypes(t, h.since(n), "compact_start", "error", "compact_end")
	if e := h.since(n)[1].GetError(); e.Code != "model_error" || e.Message != "compaction failed, the history is unchanged: HTTP 500: down" {
		t.Fatalf("error %v", e)
	}
	h.ok(&eventsv1.Prompt{Text: "p2"})
	h.waitFor("agent_end", 2)
	if got := contents(h.history()); !slices.Equal(got, []string{"user:p1", "assistant:a1", "user:p2", "assistant:a2"}) {
		t.Fatalf("history %q", got)
	}
}

// TestResponseCompleteCarriesItsCost: a response's usage in
// response_complete is priced like the token_usage and agent_end that
// follow: input (cached input at its own price) and output per million
// tokens. It carried cost_usd 0 before.
func TestResponseCompleteCarriesItsCost(t *testing.T) {
	model := scriptModel(t, "", `{"turns":[{"text":"hi","usage":{"input_tokens":1000000,"output_tokens":500000}}]}`)
	model.Cost = llm.Cost{Input: 0.10, Output: 0.20, CachedInput: 0.05}
	h := newHarnessModel(t, model, nil)
	h.ok(&eventsv1.Prompt{Text: "go"})
	resp := h.waitFor("response_complete", 1).GetResponseComplete().GetUsage()
	end := h.waitFor("agent_end", 1).GetAgentEnd().GetUsage()
	if math.Abs(resp.GetCostUsd()-0.2) > 1e-9 || resp.GetCostUsd() != end.GetCostUsd() {
		t.Fatalf("response_complete cost_usd %v, agent_end %v; want 0.2 both", resp.GetCostUsd(), end.GetCostUsd())
	}
}

// TestRollbackBeforeACompactionOfTheRun: a compaction at a run's turn gap
// that reaches back over the run's start (its prompt among what it
// replaced) is undone by the run's rollback: the messages before the run
// come back as they were, and the summary, which tells of the run's
// prompt, goes out with the run's messages. Before, the rollback kept the
// summary, and the model read the rolled-back prompt in it.
func TestRollbackBeforeACompactionOfTheRun(t *testing.T) {
	h, sent := contextHarness(t, `{"context_window":100,"turns":[
		{"text":"a0","usage":{"input_tokens":10,"output_tokens":1}},
		{"tool_calls":[{"name":"echo","args":{"text":"x"}}],"usage":{"input_tokens":90,"output_tokens":1}},
		{"text":"the user asked p0 and secret"},
		{"tool_calls":[{"name":"sleep","args":{"ms":60000}}]},
		{"text":"a2"}]}`,
		&llm.ContextConfig{CompactAtPercent: 80, KeepRecent: new(2)}, nil)
	h.ok(&eventsv1.Prompt{Text: "p0"})
	h.waitFor("agent_end", 1)
	h.ok(&eventsv1.Prompt{Text: "secret"})
	h.waitFor("compact_end", 1)
	h.waitFor("tool_execution_start", 2)
	h.ok(&eventsv1.Abort{Rollback: true})
	h.waitFor("agent_end", 2)
	if got := contents(h.history()); !slices.Equal(got, []string{"user:p0", "assistant:a0"}) {
		t.Fatalf("history after the rollback %q", got)
	}
	var all []string
	for _, m := range h.ok(&eventsv1.GetMessages{All: true}).GetMessages().GetMessages() {
		all = append(all, fmt.Sprintf("%s:%v:%v:%v", m.Role, m.Compacted, m.RolledBack, m.Summary))
	}
	want := []string{"user:false:false:false", "assistant:false:false:false",
		"user:false:true:false", "user:false:true:true", "assistant:false:true:false", "tool:false:true:false",
		"assistant:false:true:false", "tool:false:true:false"}
	if !slices.Equal(all, want) {
		t.Fatalf("all messages %q, want %q", all, want)
	}
	h.ok(&eventsv1.Prompt{Text: "p2"})
	h.waitFor("agent_end", 3)
	if got := contents(sent.reqs[len(sent.reqs)-1].Messages); !slices.Equal(got, []string{"user:p0", "assistant:a0", "user:p2"}) {
		t.Fatalf("the request after the rollback: %q", got)
	}
}
