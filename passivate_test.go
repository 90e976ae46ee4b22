package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/internal/liveheap"
	"github.com/tack-run/tack/store/sqlite"
)

// passiveRuntime is a runtime on a SQLite file that passivates sessions
// quiet for d.
func passiveRuntime(t *testing.T, d time.Duration, opts ...tack.Option) *tack.Runtime {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "tack.db"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(append([]tack.Option{tack.WithStore(st), tack.WithNode("n"), tack.WithPassivateAfter(d)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(); st.Close() })
	return rt
}

// waitUnloaded polls until session id is no longer loaded.
func waitUnloaded(t *testing.T, rt *tack.Runtime, id string) {
	t.Helper()
	eventually.Within(t, 10*time.Second, func() error {
		if rt.Loaded(id) {
			return fmt.Errorf("session %s still loaded", id)
		}
		return nil
	})
}

// TestPassivationReleasesAndRestores: a quiet session leaves memory; the
// handle taken before still works, the command restores it with its
// history, and the scripted model goes on where it was.
func TestPassivationReleasesAndRestores(t *testing.T) {
	rt := passiveRuntime(t, 30*time.Millisecond)
	ctx := t.Context()
	s, err := rt.Spawn(tack.SessionConfig{ID: "p", Script: json.RawMessage(`{"turns":[{"text":"one"},{"text":"two"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, s, "first")
	waitUnloaded(t, rt, "p")

	runOnce(t, s, "second") // the old handle restores it
	msgs, err := s.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user:first", "assistant:one", "user:second", "assistant:two"}
	if got := roles(msgs); len(got) != len(want) || got[3] != want[3] || got[0] != want[0] {
		t.Fatalf("history %v, want %v", got, want)
	}
	waitUnloaded(t, rt, "p") // and it goes again
	if ids := rt.Sessions(); len(ids) != 0 {
		t.Fatalf("loaded sessions %v, want none", ids)
	}
}

// TestPassivationWithoutAStore: a runtime given no store passivates its
// quiet sessions into an in-memory store of its own, and restores them
// from there with their history.
func TestPassivationWithoutAStore(t *testing.T) {
	rt, err := tack.New(tack.WithPassivateAfter(30 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	s, err := rt.Spawn(tack.SessionConfig{ID: "m", Script: json.RawMessage(`{"turns":[{"text":"one"},{"text":"two"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, s, "first")
	waitUnloaded(t, rt, "m")
	runOnce(t, s, "second")
	msgs, err := s.Messages(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := roles(msgs), []string{"user:first", "assistant:one", "user:second", "assistant:two"}; !slices.Equal(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	waitUnloaded(t, rt, "m")
}

// runOnce prompts and waits for the run's end through a subscription it
// closes again (an open one keeps the session loaded).
func runOnce(t *testing.T, s *tack.Session, text string) {
	t.Helper()
	ctx := t.Context()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Since: ^uint64(0) >> 1, Types: []string{"agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, text); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-sub.C:
		if ev.GetAgentEnd().GetReason() != "completed" {
			t.Fatalf("run ended %v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no agent_end")
	}
}

// TestPassivationWaitsForInProcessSubscribers: a session followed by a
// channel, or by a reader, stays loaded while one created beside it
// without a follower is passivated; it passivates once the follower
// closes.
func TestPassivationWaitsForInProcessSubscribers(t *testing.T) {
	follows := []struct {
		name   string
		follow func(ctx context.Context, s *tack.Session) (io.Closer, error)
	}{
		{"subscription", func(ctx context.Context, s *tack.Session) (io.Closer, error) {
			return s.Subscribe(ctx, tack.SubscribeOptions{})
		}},
		{"reader", func(ctx context.Context, s *tack.Session) (io.Closer, error) {
			return s.Read(ctx, tack.SubscribeOptions{})
		}},
	}
	for _, fc := range follows {
		t.Run(fc.name, func(t *testing.T) {
			rt := passiveRuntime(t, 20*time.Millisecond)
			ctx := t.Context()
			script := json.RawMessage(`{"turns":[{"text":"hi"}]}`)
			watched, err := rt.Spawn(tack.SessionConfig{ID: "watched", Script: script})
			if err != nil {
				t.Fatal(err)
			}
			follower, err := fc.follow(ctx, watched)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rt.Spawn(tack.SessionConfig{ID: "alone", Script: script}); err != nil {
				t.Fatal(err)
			}
			waitUnloaded(t, rt, "alone")
			// One more passivation period, on the same clock, for the watched one.
			if _, err := rt.Spawn(tack.SessionConfig{ID: "alone2", Script: script}); err != nil {
				t.Fatal(err)
			}
			waitUnloaded(t, rt, "alone2")
			if !rt.Loaded("watched") {
				t.Fatalf("a session with a %s was passivated", fc.name)
			}
			if err := follower.Close(); err != nil {
				t.Fatal(err)
			}
			waitUnloaded(t, rt, "watched")
		})
	}
}

// quietSystem is an actor system for a test's runtime
// (tack.WithActorSystem): it logs nothing, its dead-letter throttle lets
// go soon, and it is shut down after the runtime's Close (the runtime is
// made after it, so its Close runs first).
func quietSystem(t *testing.T) *actor.ActorSystem {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}), actor.WithDeadLetterThrottleInterval(10*time.Millisecond))
	t.Cleanup(sys.Shutdown)
	return sys
}

// collect spawns a collector in sys and subscribes it to s
// (SubscribePID from the start, of types; none: all).
func collect(t *testing.T, sys *actor.ActorSystem, s *tack.Session, types ...string) *collector {
	t.Helper()
	c := &collector{}
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return c }))
	t.Cleanup(func() { _ = sys.Root.StopFuture(pid).Wait() })
	if err := s.SubscribePID(t.Context(), pid, 0, types...); err != nil {
		t.Fatal(err)
	}
	return c
}

// collector is an actor that keeps the events it is sent.
type collector struct {
	mu  sync.Mutex
	evs []*eventsv1.Event
}

func (c *collector) Receive(ctx actor.Context) {
	if ev, ok := ctx.Message().(*eventsv1.Event); ok {
		c.mu.Lock()
		c.evs = append(c.evs, ev)
		c.mu.Unlock()
	}
}

// types lists the event names received so far.
func (c *collector) types() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, ev := range c.evs {
		out = append(out, events.Type(ev))
	}
	return out
}

// TestPassivationKeepsActorSubscribers: an actor subscriber does not keep
// the session loaded, and gets the restored session's events — first an
// events_lost for the gap in numbering, then the new run.
func TestPassivationKeepsActorSubscribers(t *testing.T) {
	sys := quietSystem(t)
	rt := passiveRuntime(t, 30*time.Millisecond, tack.WithActorSystem(sys))
	ctx := t.Context()
	s, err := rt.Spawn(tack.SessionConfig{ID: "a", Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	c := collect(t, sys, s, "session_created", "agent_*", "events_lost")
	waitUnloaded(t, rt, "a")
	if _, err := s.Prompt(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	want := []string{"session_created", "events_lost", "agent_start", "agent_status", "agent_status", "agent_end"}
	eventually.Within(t, 10*time.Second, func() error {
		if got := c.types(); len(got) < len(want) {
			return fmt.Errorf("subscriber got %v, want %v", got, want)
		}
		return nil
	})
	got := c.types()
	if len(got) != len(want) {
		t.Fatalf("subscriber got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("subscriber got %v, want %v", got, want)
		}
	}
}

// TestHandleAcrossPassivation: a handle taken before its session was
// passivated forks it, restoring it first.
func TestHandleAcrossPassivation(t *testing.T) {
	rt := passiveRuntime(t, 30*time.Millisecond)
	s, err := rt.Spawn(tack.SessionConfig{ID: "h", Script: json.RawMessage(`{"turns":[{"text":"one"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, s, "first")
	waitUnloaded(t, rt, "h")

	fork, err := s.Fork(t.Context(), 2, "h-fork")
	if err != nil {
		t.Fatalf("fork through a handle of a passivated session: %v", err)
	}
	msgs, err := fork.Messages(t.Context())
	if err != nil || len(msgs) != 2 {
		t.Fatalf("fork's history = %v, %v; want the two messages", msgs, err)
	}
}

// TestHandlesDoNotKeepPassivatedSessions: handles kept across passivation
// do not keep what their sessions held in memory. (A protoactor PID caches
// its process, so a handle holding its first actor's PID kept the stopped
// actor, its history and its events.) 50 sessions each answer 100 kB; once
// all are passivated the heap holds far less than their 5 MB of answers.
func TestHandlesDoNotKeepPassivatedSessions(t *testing.T) {
	rt := passiveRuntime(t, 30*time.Millisecond)
	answer := strings.Repeat("x", 100_000)
	script, _ := json.Marshal(map[string]any{"turns": []map[string]any{{"text": answer}}})
	before := liveheap.Bytes()
	var handles []*tack.Session
	for i := range 50 {
		s, err := rt.Spawn(tack.SessionConfig{ID: fmt.Sprintf("m%d", i), Script: script})
		if err != nil {
			t.Fatal(err)
		}
		runOnce(t, s, "go")
		handles = append(handles, s)
	}
	for _, s := range handles {
		waitUnloaded(t, rt, s.ID())
	}
	if grew := int64(liveheap.Bytes()) - int64(before); grew > 2_000_000 {
		t.Fatalf("the heap grew by %d B with 50 passivated sessions and their handles, want well under their 5 MB of answers", grew)
	}
	runtime.KeepAlive(handles)
}
