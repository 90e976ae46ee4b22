package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/eventually"
)

// Races of a runtime that parks, found by a hunt (2026-11-29): each test
// failed before the fix its comment names.

// TestClosedParkedSessionKeepsNoSubscribers: ann's session, followed by
// an actor, parks; it is closed (by ann, or by anyone) or deleted, and bob
// makes a session of the same id: ann's actor hears nothing of bob's. A
// parked session its user closed left its actor subscribers behind, and
// the next session of the id took them over (every run).
func TestClosedParkedSessionKeepsNoSubscribers(t *testing.T) {
	for _, how := range []string{"user-close", "plain-close", "delete"} {
		t.Run(how, func(t *testing.T) {
			sys := quietSystem(t)
			rt := parkingRuntime(t, tack.WithActorSystem(sys))
			ctx := t.Context()
			script := json.RawMessage(`{"turns":[{"text":"one"},{"text":"two"},{"text":"three"},{"text":"four"}]}`)
			s, err := rt.Spawn(tack.SessionConfig{ID: "x", User: "ann", Script: script})
			if err != nil {
				t.Fatal(err)
			}
			c := collect(t, sys, s)
			runOnce(t, s, "ann's secret")
			waitUnloaded(t, rt, "x")
			switch how {
			case "user-close":
				if err := s.CloseContext(tack.ForUser(ctx, "ann")); err != nil {
					t.Fatal(err)
				}
			case "plain-close":
				s.Close()
			case "delete":
				if err := rt.Delete(ctx, "x"); err != nil {
					t.Fatal(err)
				}
			}
			b, err := rt.Spawn(tack.SessionConfig{ID: "x", User: "bob", Script: script})
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range []string{"bob 1", "bob 2", "bob 3"} {
				runOnce(t, b, text)
			}
			// A subscription taken over is handed to bob's session as it
			// starts, before his first prompt: by the end of his third
			// run, his first prompt has long been sent to ann's actor.
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, ev := range c.evs {
				if text := ev.GetPromptReceived().GetText(); strings.HasPrefix(text, "bob") {
					t.Fatalf("ann's closed session's actor subscriber got bob's new session x's events: %v", ev)
				}
			}
		})
	}
}

// TestSubscribeGivenUpWhileWaking: a Subscribe (or Read) whose caller
// gives up before the parked session it names has woken leaves the
// session no follower that nobody reads: every session parks again. The
// news that the subscriber was gone went to a session not loaded yet and
// was dropped, and the subscription, queued for the woken session, kept
// it loaded for good (13 of 20 sessions, every run).
func TestSubscribeGivenUpWhileWaking(t *testing.T) {
	for _, how := range []string{"subscribe", "read"} {
		t.Run(how, func(t *testing.T) {
			rt := parkingRuntime(t, tack.WithPassivateAfter(5*time.Millisecond))
			script := json.RawMessage(`{"turns":[{"text":"one"}]}`)
			const n = 20
			failed := 0
			for i := range n {
				id := fmt.Sprintf("s%d", i)
				s, err := rt.Spawn(tack.SessionConfig{ID: id, Script: script})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Duration(i%4)*100*time.Microsecond+time.Microsecond)
				if how == "subscribe" {
					sub, err := s.Subscribe(ctx, tack.SubscribeOptions{})
					if err == nil {
						sub.Close()
					} else {
						failed++
					}
				} else {
					r, err := s.Read(ctx, tack.SubscribeOptions{})
					if err == nil {
						r.Close()
					} else {
						failed++
					}
				}
				cancel()
			}
			eventually.Within(t, 10*time.Second, func() error {
				if loaded := rt.Sessions(); len(loaded) > 0 {
					return fmt.Errorf("%d of %d %s calls gave up; %d sessions still loaded (quiet period 5 ms): %v", failed, n, how, len(loaded), loaded)
				}
				return nil
			})
		})
	}
}

// TestCloseParkedWhileCommandsWake: parked sessions closed (by no user in
// particular) while commands wake them: a session whose Close returned is
// gone for good. Close took a parked session's record after it let go of
// the registry's lock, and a restore started in between brought the
// session back (1 – 2 of 1,500, two runs of three).
func TestCloseParkedWhileCommandsWake(t *testing.T) {
	rt := parkingRuntime(t, tack.WithPassivateAfter(time.Hour))
	script := json.RawMessage(`{"turns":[{"text":"one"}]}`)
	const n = 1500
	back := 0
	for i := range n {
		id := fmt.Sprintf("k%d", i)
		s, err := rt.Spawn(tack.SessionConfig{ID: id, Script: script})
		if err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				<-start
				for range 3 {
					_, _ = s.State(t.Context())
				}
			})
		}
		close(start)
		for range i % 3 {
			// a little later each time
			time.Sleep(time.Microsecond)
		}
		s.Close()
		wg.Wait()
		if _, err := rt.Session(id); codeOf(err) != events.CodeInvalidSession {
			back++
			t.Logf("%s back after Close: %v", id, err)
		}
	}
	if back > 0 {
		t.Fatalf("%d of %d sessions came back after Close", back, n)
	}
}

// endWhileParking: sessions that park a millisecond after each command,
// hammered by readers, are ended (Delete or Close) at a random point: end
// succeeds (the session exists) and the session is gone afterwards, and
// stays gone.
func endWhileParking(t *testing.T, end func(ctx context.Context, rt *tack.Runtime, s *tack.Session) error, user string) {
	rt := parkingRuntime(t, tack.WithPassivateAfter(time.Millisecond))
	script := json.RawMessage(`{"turns":[{"text":"one"}]}`)
	ctx := t.Context()
	const n = 300
	var refused, back, readErr, alive atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			id := fmt.Sprintf("e%d", i)
			s, err := rt.Spawn(tack.SessionConfig{ID: id, User: user, Script: script})
			if err != nil {
				t.Error(err)
				return
			}
			stop := make(chan struct{})
			var readers sync.WaitGroup
			for r := range 2 {
				readers.Go(func() {
					for k := 0; ; k++ {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := s.State(ctx); err != nil && codeOf(err) != events.CodeInvalidSession && codeOf(err) != events.CodeNotAlive {
							readErr.Add(1)
							t.Logf("%s: state: %v", id, err)
						}
						time.Sleep(time.Duration((k+r+i)%4) * 300 * time.Microsecond)
					}
				})
			}
			time.Sleep(time.Duration(i%7) * 700 * time.Microsecond)
			err = end(ctx, rt, s)
			if err != nil {
				refused.Add(1)
				t.Logf("%s: end: %v", id, err)
			}
			time.Sleep(3 * time.Millisecond)
			close(stop)
			readers.Wait()
			if err != nil {
				time.Sleep(5 * time.Millisecond)
				if _, err := rt.Session(id); err == nil {
					alive.Add(1)
					t.Logf("%s: refused end, yet the session answers: loaded %v", id, rt.Loaded(id))
				}
			}
			if err == nil {
				time.Sleep(5 * time.Millisecond)
				if _, err := rt.Session(id); codeOf(err) != events.CodeInvalidSession {
					back.Add(1)
					t.Logf("%s: after end: Session = %v, loaded %v", id, err, rt.Loaded(id))
				}
			}
		})
	}
	wg.Wait()
	if refused.Load() > 0 || back.Load() > 0 || readErr.Load() > 0 {
		t.Fatalf("of %d sessions: %d ends refused (%d of them still there after), %d sessions back after their end, %d reads failed otherwise", n, refused.Load(), alive.Load(), back.Load(), readErr.Load())
	}
}

// TestEndWhileParking: Delete and Close, by a user and by no one in
// particular, of sessions that park and wake all the while. A Delete
// during a park found the session neither loaded nor parked, answered
// invalid_session, and the session lived on (1 – 2 of 300 sessions, in
// about one run of six): no passivation begins now while a Delete has
// the id.
func TestEndWhileParking(t *testing.T) {
	type ending = func(ctx context.Context, rt *tack.Runtime, s *tack.Session) error
	for _, c := range []struct {
		name, user string
		end        ending
	}{
		{"delete", "", func(ctx context.Context, rt *tack.Runtime, s *tack.Session) error { return rt.Delete(ctx, s.ID()) }},
		{"delete for its user", "ann", func(ctx context.Context, rt *tack.Runtime, s *tack.Session) error {
			return rt.Delete(tack.ForUser(ctx, "ann"), s.ID())
		}},
		{"close", "", func(ctx context.Context, rt *tack.Runtime, s *tack.Session) error { return s.CloseContext(ctx) }},
		{"close for its user", "ann", func(ctx context.Context, rt *tack.Runtime, s *tack.Session) error {
			return s.CloseContext(tack.ForUser(ctx, "ann"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) { endWhileParking(t, c.end, c.user) })
	}
}

// TestSubagentsWhileParking: parents that call sub-agents in a runtime
// whose sessions park a millisecond after each command: every call's
// child answers. A child that went quiet before its parent's call
// subscribed to it could park, and the call failed ("no answer to
// *actors.SubscribeSink: future: dead letter", about one run in four):
// the call wakes it by id and subscribes again.
func TestSubagentsWhileParking(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "child.json"), []byte(`{"turns":[{"text":"child done"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rt := parkingRuntime(t, tack.WithPassivateAfter(time.Millisecond), tack.WithScriptDir(dir))
	const parents, calls = 24, 8
	var turns []string
	for range calls {
		turns = append(turns, `{"tool_calls":[{"name":"subagent","args":{"task":"answer"}}]}`)
	}
	script := json.RawMessage(`{"turns":[` + strings.Join(turns, ",") + `,{"text":"done"}]}`)
	var wg sync.WaitGroup
	for p := range parents {
		s, err := rt.Spawn(tack.SessionConfig{ID: fmt.Sprintf("p%d", p), Script: script, Tools: []string{"subagent"},
			Subagents: &tack.SubagentConfig{Model: "script:child.json"}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := callsOK(t.Context(), s); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
