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
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/metrics/metricstest"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/sqlite"
)

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
