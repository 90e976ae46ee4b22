package tack_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/llm"
)

// parkingRuntime is a runtime with no store that parks sessions quiet
// for 30 ms.
func parkingRuntime(t *testing.T, opts ...tack.Option) *tack.Runtime {
	t.Helper()
	rt, err := tack.New(append([]tack.Option{tack.WithPassivateAfter(30 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// TestParkedSession: a parked session — no store, so no writes while it
// ran — exists as a loaded one does: it is listed with what it holds,
// its user is known, its id stays taken, and Delete or Close ends it.
func TestParkedSession(t *testing.T) {
	rt := parkingRuntime(t)
	ctx := t.Context()
	script := json.RawMessage(`{"turns":[{"text":"one"},{"text":"two"}]}`)
	s, err := rt.Spawn(tack.SessionConfig{ID: "m", User: "ann", Script: script})
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, s, "first words")
	waitUnloaded(t, rt, "m")

	list, err := rt.List(ctx, tack.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.Sessions); n != 1 {
		t.Fatalf("listed %d sessions, want the parked one", n)
	}
	if sum := list.Sessions[0]; sum.Session != "m" || sum.State != "idle" || sum.MessageCount != 2 || sum.Title != "first words" || sum.UpdatedAt == "" {
		t.Fatalf("parked session listed as %v", sum)
	}
	if rt.Loaded("m") {
		t.Fatal("listing woke the parked session")
	}
	if list, _ := rt.List(ctx, tack.ListOptions{User: "bob"}); len(list.Sessions) != 0 {
		t.Fatalf("bob's list shows %v", list.Sessions)
	}
	if u, err := rt.User(ctx, "m"); err != nil || u != "ann" {
		t.Fatalf("User = %q, %v", u, err)
	}
	if _, err := rt.Spawn(tack.SessionConfig{ID: "m", Script: script}); codeOf(err) != events.CodeBadRequest {
		t.Fatalf("a second session m: %v, want bad_request", err)
	}

	runOnce(t, s, "second") // the parked session wakes with its history and its model's place
	msgs, err := s.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := roles(msgs), []string{"user:first words", "assistant:one", "user:second", "assistant:two"}; !slices.Equal(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	if st, err := s.State(ctx); err != nil || st.GetTitle() != "first words" {
		t.Fatalf("state %v, %v", st, err)
	}
	waitUnloaded(t, rt, "m")
	if err := rt.Delete(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.State(ctx); codeOf(err) != events.CodeInvalidSession {
		t.Fatalf("state of the deleted session: %v", err)
	}

	c, err := rt.Spawn(tack.SessionConfig{ID: "c", Script: script})
	if err != nil {
		t.Fatal(err)
	}
	waitUnloaded(t, rt, "c")
	c.Close()
	if _, err := c.State(ctx); codeOf(err) != events.CodeInvalidSession {
		t.Fatalf("state of the closed session: %v", err)
	}
	if list, _ := rt.List(ctx, tack.ListOptions{}); len(list.Sessions) != 0 {
		t.Fatalf("listed after Delete and Close: %v", list.Sessions)
	}
}

// TestParkingKeepsEventNumbers: an actor subscriber of a session that is
// parked and woken hears its events numbered on from where they were —
// no events_lost, no gap — where a session restored from a store skips
// ahead (TestPassivationKeepsActorSubscribers).
func TestParkingKeepsEventNumbers(t *testing.T) {
	sys := quietSystem(t)
	rt := parkingRuntime(t, tack.WithActorSystem(sys))
	ctx := t.Context()
	s, err := rt.Spawn(tack.SessionConfig{ID: "a", Script: json.RawMessage(`{"turns":[{"text":"hi"},{"text":"again"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	c := collect(t, sys, s)
	for _, text := range []string{"one", "two"} {
		waitUnloaded(t, rt, "a")
		if _, err := s.Prompt(ctx, text); err != nil {
			t.Fatal(err)
		}
		eventually.Within(t, 10*time.Second, func() error {
			if n := count(c.types(), "agent_end"); n == 0 || text == "two" && n < 2 {
				return fmt.Errorf("subscriber got %v", c.types())
			}
			return nil
		})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ev := range c.evs {
		if events.Type(ev) == "events_lost" || ev.Seq != uint64(i+1) {
			t.Fatalf("event %d is %s numbered %d; all: %v", i, events.Type(ev), ev.Seq, c.evs)
		}
	}
}

// count counts s in list.
func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestParkingUnderLoad: commands from several goroutines meet a session
// that parks whenever it is quiet for a millisecond, and wakes (halfway,
// all of them at once, on a session they waited to see parked); every
// command is answered, every prompt runs once, and the history holds
// them all in the order they ran.
func TestParkingUnderLoad(t *testing.T) {
	rt, err := tack.New(tack.WithPassivateAfter(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	ctx := t.Context()
	const writers, prompts = 4, 15
	turns := make([]string, writers*prompts)
	for i := range turns {
		turns[i] = `{"text":"ok"}`
	}
	s, err := rt.Spawn(tack.SessionConfig{ID: "l", Script: json.RawMessage(`{"turns":[` + strings.Join(turns, ",") + `]}`)})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, writers*prompts*2)
	// Halfway, the writers wait until the session is parked, then all
	// come at once: at least one wake meets commands from everyone,
	// besides the parks the pauses between commands allow.
	half, resume := sync.WaitGroup{}, make(chan struct{})
	half.Add(writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range prompts {
				if i == prompts/2 {
					half.Done()
					<-resume
				}
				if _, err := s.Prompt(ctx, fmt.Sprintf("w%d-%d", w, i)); err != nil {
					errs <- err
				}
				if _, err := s.State(ctx); err != nil {
					errs <- err
				}
				time.Sleep(time.Duration(i%4) * time.Millisecond)
			}
		})
	}
	half.Wait()
	waitUnloaded(t, rt, "l")
	close(resume)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var msgs []*llm.Message
	eventually.Within(t, 10*time.Second, func() error {
		st, err := s.State(ctx)
		if err != nil {
			return err
		}
		if msgs, err = s.Messages(ctx); err != nil {
			return err
		}
		if st.GetState() != "idle" || len(msgs) != 2*writers*prompts {
			return fmt.Errorf("%s with %d messages, want idle with %d", st.GetState(), len(msgs), 2*writers*prompts)
		}
		return nil
	})
	seen := map[string]bool{}
	for i, m := range msgs {
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			t.Fatalf("message %d is %s, want %s", i, m.Role, want)
		}
		if m.Role == "user" {
			if seen[m.Content] {
				t.Fatalf("prompt %q ran twice", m.Content)
			}
			seen[m.Content] = true
		}
	}
}
