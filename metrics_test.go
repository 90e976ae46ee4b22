package tack_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/metrics/metricstest"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/limits"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/sqlite"
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

// TestMetricsRestoreFromSQLite: a session stored in SQLite mid-run, its
// process gone, is restored by another runtime: counted idle, its run
// ended interrupted, and the write that records the restore timed.
func TestMetricsRestoreFromSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tack.db")
	ctx := context.Background()
	open := make(chan struct{})
	defer close(open)

	first := metrics.New()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"), tack.WithMetrics(first), tack.WithTools(gateTool("gate", open)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := rt.Spawn(tack.SessionConfig{ID: "s", Tools: []string{"gate"}, Script: json.RawMessage(`{"turns": [{"tool_calls": [{"name": "gate"}]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	f := follow(t, s)
	if _, err := s.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	// Told only once the store holds the batch, state executing_tools.
	f.next(t, "the gate tool's start", func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil })
	wantStates(t, first, 0, 0, 0, 1)
	got := metricstest.Scrape(t, first.Handler())
	if n := got.Count("tack_store_write_duration_seconds"); n == 0 {
		t.Error("no store write was timed")
	}
	rt.Close() // the process goes: the store keeps the run as it was
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	wantStates(t, first, 0, 0, 0, 0)

	second := metrics.New()
	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rt2 := metricsRuntime(t, second, tack.WithStore(st), tack.WithNode("n"), tack.WithTools(gateTool("gate", open)))
	restored, err := rt2.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := restored.Subscribe(ctx, tack.SubscribeOptions{Buffered: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for ev := range sub.C {
		if e := ev.GetAgentEnd(); e != nil {
			if e.Reason != "interrupted" {
				t.Fatalf("the restored run ended %s", e.Reason)
			}
			break
		}
	}
	wantStates(t, second, 1, 0, 0, 0)
	got = metricstest.Scrape(t, second.Handler())
	if n := got.Value("tack_runs_ended_total", "reason", "interrupted"); n != 1 {
		t.Errorf("runs ended interrupted: %v, want 1", n)
	}
	if n := got.Value("tack_runs_started_total"); n != 0 {
		t.Errorf("runs started: %v, want 0", n)
	}
	// The restore wrote what it found back, once, before agent_end was told.
	if n := got.Count("tack_store_write_duration_seconds"); n != 1 {
		t.Errorf("store writes: %d, want 1", n)
	}
}

// failingStore fails the next fail writes.
type failingStore struct {
	store.Store
	mu             sync.Mutex
	fail           int
	writes, failed int
}

func (f *failingStore) Apply(ctx context.Context, id string, b *store.Batch) error {
	f.mu.Lock()
	f.writes++
	fail := f.fail > 0
	if fail {
		f.fail--
		f.failed++
	}
	f.mu.Unlock()
	if fail {
		return errors.New("disk full")
	}
	return f.Store.Apply(ctx, id, b)
}

func (f *failingStore) failNext(n int) {
	f.mu.Lock()
	f.fail = n
	f.mu.Unlock()
}

func (f *failingStore) counts() (writes, failed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes, f.failed
}

// TestMetricsCountStoreFailures: every try at a write is timed and every
// failed one counted. A write that fails once is retried and lands; one
// that fails every try takes the prompt's run down, ended with error
// though its start was never told.
func TestMetricsCountStoreFailures(t *testing.T) {
	m := metrics.New()
	st := &failingStore{Store: memory.New()}
	open := make(chan struct{})
	defer close(open)
	rt := metricsRuntime(t, m, tack.WithStore(st), tack.WithNode("n"), tack.WithTools(gateTool("gate", open)))
	ctx := context.Background()
	// The second run waits in its gate tool while its writes fail, so it
	// is still in progress when the session goes down.
	s, err := rt.Spawn(tack.SessionConfig{Tools: []string{"gate"}, Script: json.RawMessage(`{"turns": [{"text": "one"}, {"tool_calls": [{"name": "gate"}]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	st.failNext(1)
	runToEndT(t, s, "completed")
	st.failNext(4) // the first try and its three retries
	if _, err := s.Prompt(ctx, "again"); codeOf(err) != "store_failed" {
		t.Fatalf("prompt with the store failing: %v, want store_failed", err)
	}
	// The prompt is answered store_failed once its write failed for good;
	// the session then takes the run down, so its end is counted a moment
	// after the answer: wait for it.
	got := eventually.Value(t, 10*time.Second, func() (metricstest.Scraped, error) {
		got := metricstest.Scrape(t, m.Handler())
		if got.Value("tack_runs_ended_total", "reason", "error") == 0 {
			return got, errors.New("runs ended error: 0, want 1")
		}
		return got, nil
	})
	writes, failed := st.counts()
	if failed != 5 {
		t.Fatalf("the store failed %d writes, want 5", failed)
	}
	if n := got.Value("tack_store_write_failures_total"); n != float64(failed) {
		t.Errorf("store write failures: %v, want %d", n, failed)
	}
	if n := got.Count("tack_store_write_duration_seconds"); n != uint64(writes) {
		t.Errorf("store writes timed: %d, want %d", n, writes)
	}
	if n := got.Value("tack_runs_started_total"); n != 2 {
		t.Errorf("runs started: %v, want 2", n)
	}
	for reason, want := range map[string]float64{"completed": 1, "error": 1} {
		if n := got.Value("tack_runs_ended_total", "reason", reason); n != want {
			t.Errorf("runs ended %s: %v, want %v", reason, n, want)
		}
	}
	wantStates(t, m, 1, 0, 0, 0)
}
