package tack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/postgres"
	"github.com/tack-run/tack/store/postgres/pgtest"
	"github.com/tack-run/tack/store/sqlite"
)

// storeCase opens one kind of store for a test, with a clock; the test
// closes it. PostgreSQL cases skip without TACK_TEST_POSTGRES.
type storeCase struct {
	name string
	open func(t *testing.T, now func() time.Time) store.Store
}

// everyStore is the three stores.
var everyStore = []storeCase{
	{"memory", func(t *testing.T, now func() time.Time) store.Store { return memory.New(store.WithClock(now)) }},
	{"sqlite", func(t *testing.T, now func() time.Time) store.Store {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tack.db"), store.WithClock(now))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
	{"postgres", func(t *testing.T, now func() time.Time) store.Store {
		st, err := postgres.Open(t.Context(), pgtest.DSN(t), store.WithClock(now))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
}

// TestDeleteSession: deleting a session whose sub-agent is at work aborts
// both, and afterwards neither is found — loaded or stored, by this
// runtime or a new one on the same store — while another session stays.
// Deleting it again is invalid_session.
func TestDeleteSession(t *testing.T) {
	parent := `{"turns":[{"tool_calls":[{"name":"subagent","args":{"task":"wait"}}]},{"text":"never"}]}`
	slow := `{"turns":[{"tool_calls":[{"name":"sleep_immune","args":{"ms":60000}}]},{"text":"never"}]}`
	for _, sc := range everyStore {
		t.Run(sc.name, func(t *testing.T) {
			st := sc.open(t, time.Now)
			defer st.Close()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "slow.json"), []byte(slow), 0o600); err != nil {
				t.Fatal(err)
			}
			rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"), tack.WithScriptDir(dir))
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			defer func() {
				if !closed {
					rt.Close()
				}
			}()
			ctx := t.Context()
			p, err := rt.Spawn(tack.SessionConfig{ID: "p", Script: json.RawMessage(parent), Tools: []string{"subagent"},
				Subagents: &tack.SubagentConfig{Model: "script:slow.json"}})
			if err != nil {
				t.Fatal(err)
			}
			other, err := rt.Spawn(tack.SessionConfig{ID: "p2", Script: json.RawMessage(`{"turns":[{"text":"kept"}]}`)})
			if err != nil {
				t.Fatal(err)
			}
			promptAndWait(t, rt, other.ID(), "stay", "r-1")
			sub, err := p.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"sub_agent_event"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Prompt(ctx, "go"); err != nil {
				t.Fatal(err)
			}
			// Once the child's tool runs, the child has its prompt: the
			// delete meets a sub-agent at work.
			var child string
			for ev := range sub.C {
				if e := ev.GetSubAgentEvent(); e.GetEvent().GetToolExecutionStart() != nil {
					child = e.ChildSession
					break
				}
			}
			if child != "p/sub-1" || !rt.Loaded(child) {
				t.Fatalf("child %q loaded %v", child, rt.Loaded(child))
			}
			if err := p.Delete(ctx); err != nil {
				t.Fatal(err)
			}
			if _, open := <-sub.C; open {
				t.Fatal("the deleted session's events go on")
			}
			gone := func(rt *tack.Runtime) {
				t.Helper()
				for _, id := range []string{"p", "p/sub-1"} {
					if rt.Loaded(id) {
						t.Fatalf("%s still loaded", id)
					}
					if _, err := rt.State(ctx, id); tack.Code(err) != events.CodeInvalidSession {
						t.Fatalf("get_state of %s after the delete: %v", id, err)
					}
					if _, err := st.Get(ctx, id); !errors.Is(err, store.ErrNotFound) {
						t.Fatalf("%s still stored: %v", id, err)
					}
				}
				if msgs, err := rt.Messages(ctx, "p2"); err != nil || len(msgs) != 2 {
					t.Fatalf("the other session: %v, %v", roles(msgs), err)
				}
			}
			gone(rt)
			if err := rt.Delete(ctx, "p"); tack.Code(err) != events.CodeInvalidSession {
				t.Fatalf("a second delete: %v", err)
			}
			rt.Close()
			closed = true
			again, err := tack.New(tack.WithStore(st), tack.WithNode("n2"), tack.WithScriptDir(dir))
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			gone(again)
		})
	}
}

// TestSweep: Sweep deletes the sessions whose last change is older than
// the retention time by the runtime's clock, and keeps those changed
// since, those with an open event stream, queued input or a run in
// progress — whatever the clock says of them.
func TestSweep(t *testing.T) {
	for _, sc := range everyStore {
		t.Run(sc.name, func(t *testing.T) {
			clock := &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			st := sc.open(t, clock.Now)
			defer st.Close()
			rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"), tack.WithClock(clock.Now))
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			ctx := t.Context()
			quick := json.RawMessage(`{"turns":[{"text":"ok"}]}`)
			busy := json.RawMessage(`{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":60000}}]},{"text":"never"}]}`)
			spawn := func(id string, script json.RawMessage) *tack.Session {
				s, err := rt.Spawn(tack.SessionConfig{ID: id, Script: script})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			for _, id := range []string{"old", "closed", "watched", "running", "recent"} {
				script := quick
				if id == "running" {
					script = busy
				}
				spawn(id, script)
			}
			promptAndWait(t, rt, "old", "hello", "r-1")
			closed, _ := rt.Session("closed")
			closed.Close()
			watched, _ := rt.Session("watched")
			sub, err := watched.Subscribe(ctx, tack.SubscribeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			running, _ := rt.Session("running")
			if _, err := running.Prompt(ctx, "work"); err != nil {
				t.Fatal(err)
			}
			waitState(t, running, "executing_tools")

			if got, err := rt.Sweep(ctx, time.Hour); err != nil || len(got) != 0 {
				t.Fatalf("a sweep before anything is old deleted %v, %v", got, err)
			}
			clock.Set(clock.Now().Add(2 * time.Hour))
			promptAndWait(t, rt, "recent", "still here", "r-1")
			got, err := rt.Sweep(ctx, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, []string{"closed", "old"}) {
				t.Fatalf("swept %q, want closed and old", got)
			}
			for _, id := range []string{"watched", "running", "recent"} {
				if _, err := rt.State(ctx, id); err != nil {
					t.Fatalf("%s after the sweep: %v", id, err)
				}
			}
			if _, err := rt.State(ctx, "old"); tack.Code(err) != events.CodeInvalidSession {
				t.Fatalf("old after the sweep: %v", err)
			}
		})
	}
}

// waitState polls s until it is in state.
func waitState(t *testing.T, s *tack.Session, state string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	eventually.Within(t, 10*time.Second, func() error {
		if st, err := s.State(ctx); err != nil || st.State != state {
			return fmt.Errorf("%s stayed %v (%v), want %s", s.ID(), st.GetState(), err, state)
		}
		return nil
	})
}

func TestSweepEvery(t *testing.T) {
	for _, tc := range []struct{ retain, want time.Duration }{
		{time.Second, time.Second}, {time.Minute, 6 * time.Second}, {30 * 24 * time.Hour, time.Hour},
	} {
		if got := tack.SweepEvery(tc.retain); got != tc.want {
			t.Errorf("SweepEvery(%v) = %v, want %v", tc.retain, got, tc.want)
		}
	}
}

// TestCloseAnswersCommandsInFlight: commands sent while the runtime
// closes get an error as it closes, not at the end of their timeout (10 s
// by default): a session that stops with a command unread in its mailbox
// never answers it, and its sender used to wait the whole timeout.
func TestCloseAnswersCommandsInFlight(t *testing.T) {
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	var started, done sync.WaitGroup
	started.Add(n)
	done.Add(n)
	for range n {
		s, err := rt.Spawn(tack.SessionConfig{Model: "script:demo"})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer done.Done()
			first := true
			for {
				_, err := s.State(context.Background())
				if first {
					started.Done()
					first = false
				}
				if err != nil {
					return
				}
			}
		}()
	}
	started.Wait()
	closed := time.Now()
	rt.Close()
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
		t.Logf("every command answered %v after Close began", time.Since(closed))
	case <-time.After(5 * time.Second):
		t.Fatal("commands sent as the runtime closed still wait 5 s later")
	}
}
