package tack_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/metrics/metricstest"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/limits"
	"github.com/tack-run/tack/tools"
)

// metricsRuntime is a runtime counting into m, closed when t ends.
func metricsRuntime(t *testing.T, m *metrics.Metrics, opts ...tack.Option) *tack.Runtime {
	t.Helper()
	rt, err := tack.New(append(opts, tack.WithMetrics(m))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// wantStates asserts tack_sessions for every state, in the order of
// fsm.States: idle, running, streaming, executing_tools.
func wantStates(t *testing.T, m *metrics.Metrics, want ...float64) {
	t.Helper()
	got := metricstest.Scrape(t, m.Handler())
	for i, st := range []string{"idle", "running", "streaming", "executing_tools"} {
		if n := got.Value("tack_sessions", "state", st); n != want[i] {
			t.Errorf("tack_sessions{state=%q} = %v, want %v", st, n, want[i])
		}
	}
}

// stepped holds each model request twice until the test steps it on:
// before it starts (the session stays running) and after its first chunk
// (the session is streaming).
type stepped struct {
	llm.Provider
	steps chan struct{}
}

func (p *stepped) Stream(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	if err := p.step(ctx); err != nil {
		return nil, err
	}
	first := true
	return p.Provider.Stream(ctx, req, func(c llm.Chunk) {
		emit(c)
		if first {
			first = false
			_ = p.step(ctx)
		}
	})
}

func (p *stepped) step(ctx context.Context) error {
	select {
	case <-p.steps:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// steppedModels resolves "stepped" with an inline script to that script,
// held by stepped.
type steppedModels struct{ steps chan struct{} }

func (r steppedModels) Resolve(name string, inline json.RawMessage) (*llm.Model, error) {
	if name != "stepped" {
		return nil, llm.ErrUnknownModel
	}
	m, err := script.NewResolver("").Resolve("", inline)
	if err != nil {
		return nil, err
	}
	m.Provider = &stepped{Provider: m.Provider, steps: r.steps}
	return m, nil
}

// gateTool is a tool called name that runs until open is closed.
func gateTool(name string, open chan struct{}) tools.Tool {
	return tools.Define(tools.Spec{Name: name, Description: "Wait for the test."},
		func(ctx context.Context, _ json.RawMessage, _ func(string)) (string, error) {
			select {
			case <-open:
				return "opened", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
}

func isState(to string) func(*eventsv1.Event) bool {
	return func(ev *eventsv1.Event) bool { return ev.GetStateChanged().GetTo() == to }
}

// TestMetricsFollowARun drives a run through every state, scraping at
// each: the session is counted in exactly the state it is in; the run,
// its tokens (as the script reports them) and its tool calls are counted
// once it ends; closing the session uncounts it.
func TestMetricsFollowARun(t *testing.T) {
	m := metrics.New()
	steps, open := make(chan struct{}), make(chan struct{})
	rt := metricsRuntime(t, m, tack.WithModels(steppedModels{steps}), tack.WithTools(gateTool("gate", open)))
	s, err := rt.Spawn(tack.SessionConfig{Model: "stepped", Tools: []string{"gate"}, Script: json.RawMessage(`{"turns": [
		{"text": "checking", "tool_calls": [{"name": "echo", "args": {"text": "a"}}, {"name": "echo", "args": {"text": "b"}}, {"name": "gate"}],
		 "usage": {"input_tokens": 10, "output_tokens": 3}},
		{"text": "done", "usage": {"input_tokens": 20, "output_tokens": 5}}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	f := follow(t, s)
	wantStates(t, m, 1, 0, 0, 0)
	if _, err := s.Prompt(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	for turn := range 2 {
		f.next(t, "running", isState("running"))
		wantStates(t, m, 0, 1, 0, 0)
		steps <- struct{}{}
		f.next(t, "streaming", isState("streaming"))
		wantStates(t, m, 0, 0, 1, 0)
		steps <- struct{}{}
		if turn == 0 {
			f.next(t, "executing_tools", isState("executing_tools"))
			wantStates(t, m, 0, 0, 0, 1)
			close(open)
		}
	}
	end, _ := f.next(t, "agent_end", isEnd)
	if r := end.GetAgentEnd().Reason; r != "completed" {
		t.Fatalf("the run ended %s", r)
	}
	wantStates(t, m, 1, 0, 0, 0)
	got := metricstest.Scrape(t, m.Handler())
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"tack_runs_started_total", nil, 1},
		{"tack_runs_ended_total", []string{"reason", "completed"}, 1},
		{"tack_runs_ended_total", []string{"reason", "aborted"}, 0},
		{"tack_tokens_total", []string{"type", "input"}, 30},
		{"tack_tokens_total", []string{"type", "output"}, 8},
		{"tack_store_write_failures_total", nil, 0},
	} {
		if n := got.Value(c.name, c.labels...); n != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, n, c.want)
		}
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   uint64
	}{
		{"tack_tool_duration_seconds", []string{"tool", "echo", "result", "ok"}, 2},
		{"tack_tool_duration_seconds", []string{"tool", "gate", "result", "ok"}, 1},
		{"tack_abort_delivery_seconds", nil, 0},
		{"tack_store_write_duration_seconds", nil, 0}, // no store
	} {
		if n := got.Count(c.name, c.labels...); n != c.want {
			t.Errorf("%s%v counted %d, want %d", c.name, c.labels, n, c.want)
		}
	}
	s.Close()
	wantStates(t, m, 0, 0, 0, 0)
}

// TestMetricsCountAborts: a user's abort of a running tool, a user's abort
// while idle and a plugin's abort each put one observation in the abort
// delivery histogram; runs end aborted, with the plugin's reason, and
// with error for a failed request.
func TestMetricsCountAborts(t *testing.T) {
	m := metrics.New()
	open := make(chan struct{})
	defer close(open)
	rt := metricsRuntime(t, m, tack.WithTools(gateTool("gate", open)), tack.WithPlugins(limits.Name, limits.New))
	ctx := context.Background()

	aborted, err := rt.Spawn(tack.SessionConfig{Tools: []string{"gate"}, Script: json.RawMessage(`{"turns": [{"tool_calls": [{"name": "gate"}]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	f := follow(t, aborted)
	if _, err := aborted.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	f.next(t, "the gate tool's start", func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil })
	wantStates(t, m, 0, 0, 0, 1)
	if err := aborted.Abort(ctx, tack.AbortOptions{}); err != nil {
		t.Fatal(err)
	}
	end, _ := f.next(t, "agent_end", isEnd)
	if r := end.GetAgentEnd().Reason; r != "aborted" {
		t.Fatalf("the run ended %s", r)
	}
	if err := aborted.Abort(ctx, tack.AbortOptions{}); err != nil { // idle: agent_abort all the same
		t.Fatal(err)
	}

	limited, err := rt.Spawn(tack.SessionConfig{
		Plugins: []plugins.Config{{Name: limits.Name, Config: json.RawMessage(`{"max_turns": 1}`)}},
		Script:  json.RawMessage(`{"turns": [{"tool_calls": [{"name": "echo", "args": {"text": "a"}}]}]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	runToEndT(t, limited, limits.Reason)

	failed, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(`{"turns": [{"error": {"status": 400, "message": "bad request"}}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	runToEndT(t, failed, "error")

	wantStates(t, m, 3, 0, 0, 0)
	got := metricstest.Scrape(t, m.Handler())
	if n := got.Count("tack_abort_delivery_seconds"); n != 3 {
		t.Errorf("abort deliveries: %d, want 3", n)
	}
	for reason, want := range map[string]float64{"aborted": 1, limits.Reason: 1, "error": 1, "completed": 0} {
		if n := got.Value("tack_runs_ended_total", "reason", reason); n != want {
			t.Errorf("runs ended %s: %v, want %v", reason, n, want)
		}
	}
	if n := got.Value("tack_runs_started_total"); n != 3 {
		t.Errorf("runs started: %v, want 3", n)
	}
	// The gate tool was killed by the abort: it ran, and failed.
	if n := got.Count("tack_tool_duration_seconds", "tool", "gate", "result", "error"); n != 1 {
		t.Errorf("gate calls that failed: %d, want 1", n)
	}
}

// runToEndT prompts s and waits for the run's agent_end with reason.
func runToEndT(t *testing.T, s *tack.Session, reason string) {
	t.Helper()
	f := follow(t, s)
	if _, err := s.Prompt(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	end, _ := f.next(t, "agent_end", isEnd)
	if r := end.GetAgentEnd().Reason; r != reason {
		t.Fatalf("the run ended %s, want %s", r, reason)
	}
}
