package tack_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/policy"
)

// TestNewSessionStartsParked: in a runtime that parks its quiet sessions,
// a new session is a parked record until its first command: no actor is
// loaded for it, it is listed and its id is taken; a subscriber sees it
// begin as any new session does (session_created, number 1), and it runs
// as one. Deleting it frees its id.
func TestNewSessionStartsParked(t *testing.T) {
	rt := parkingRuntime(t, tack.WithPassivateAfter(time.Hour))
	ctx := t.Context()
	script := json.RawMessage(`{"turns":[{"text":"one"}]}`)
	s, err := rt.Spawn(tack.SessionConfig{ID: "n", User: "ann", Script: script})
	if err != nil {
		t.Fatal(err)
	}
	if rt.Loaded("n") || len(rt.Sessions()) != 0 {
		t.Fatalf("a new session is loaded (%v): it should be parked until its first command", rt.Sessions())
	}
	list, err := rt.List(ctx, tack.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].Session != "n" || list.Sessions[0].State != "idle" || list.Sessions[0].MessageCount != 0 {
		t.Fatalf("listed %v, want the new session, idle and empty", list.Sessions)
	}
	if u, err := rt.User(ctx, "n"); err != nil || u != "ann" {
		t.Fatalf("User = %q, %v", u, err)
	}
	if _, err := rt.Spawn(tack.SessionConfig{ID: "n", Script: script}); codeOf(err) != events.CodeBadRequest {
		t.Fatalf("a second session n: %v, want bad_request", err)
	}
	if rt.Loaded("n") {
		t.Fatal("the refused create woke the session")
	}

	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, "hi"); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for {
		select {
		case ev := <-sub.C:
			seen = append(seen, events.Type(ev))
			if len(seen) == 1 && (ev.GetSessionCreated() == nil || ev.GetSeq() != 1) {
				t.Fatalf("first event %s #%d, want session_created #1", seen[0], ev.GetSeq())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no agent_end; saw %v", seen)
		}
		if seen[len(seen)-1] == "agent_end" {
			break
		}
	}
	if !rt.Loaded("n") {
		t.Fatal("the session ran without being loaded")
	}
	msgs, err := s.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := roles(msgs), []string{"user:hi", "assistant:one"}; !slices.Equal(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}

	if _, err := rt.Spawn(tack.SessionConfig{ID: "d", Script: script}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Session("d"); codeOf(err) != events.CodeInvalidSession {
		t.Fatalf("the deleted session: %v, want invalid_session", err)
	}
	if _, err := rt.Spawn(tack.SessionConfig{ID: "d", Script: script}); err != nil {
		t.Fatalf("making d again: %v", err)
	}
}

// TestCloseParkedSessionOfItsUser: a parked session that its user
// closes is gone, as a loaded one is without a store; another user's
// close leaves it as it was.
func TestCloseParkedSessionOfItsUser(t *testing.T) {
	rt := parkingRuntime(t, tack.WithPassivateAfter(time.Hour))
	script := json.RawMessage(`{"turns":[{"text":"one"}]}`)
	s, err := rt.Spawn(tack.SessionConfig{ID: "c", User: "ann", Script: script})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.CloseContext(tack.ForUser(t.Context(), "bob"))
	if _, err := rt.User(t.Context(), "c"); err != nil {
		t.Fatalf("bob's close ended ann's session: %v", err)
	}
	if err := s.CloseContext(tack.ForUser(t.Context(), "ann")); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Session("c"); codeOf(err) != events.CodeInvalidSession {
		t.Fatalf("the closed session: %v, want invalid_session", err)
	}
}

// TestNewSessionUnderMaxSessionsStartsLoaded: max_sessions counts the
// sessions loaded, so a session of a user who has the bound starts
// loaded, and counts, even in a runtime that parks.
func TestNewSessionUnderMaxSessionsStartsLoaded(t *testing.T) {
	rt := grantsRuntime(t, &policy.Policy{Limits: policy.Limits{"alice": {MaxSessions: 1}}}, tack.WithPassivateAfter(time.Hour))
	if _, err := rt.Spawn(tack.SessionConfig{ID: "a1", User: "alice", Model: "good"}); err != nil {
		t.Fatal(err)
	}
	if !rt.Loaded("a1") {
		t.Fatal("alice's session started parked: max_sessions would not count it")
	}
	if _, err := rt.Spawn(tack.SessionConfig{ID: "a2", User: "alice", Model: "good"}); codeOf(err) != events.CodeRateLimited {
		t.Fatalf("alice's second session: %v, want rate_limited", err)
	}
	if _, err := rt.Spawn(tack.SessionConfig{ID: "b1", User: "bob", Model: "good"}); err != nil {
		t.Fatal(err)
	}
	if rt.Loaded("b1") {
		t.Fatal("bob, who has no bound, has his new session loaded")
	}
}

// TestCommandsWhileParking: sessions made parked, which park again a
// millisecond after each command, asked from several goroutines at once:
// every command wakes its session or reaches it, none is lost between a
// session's parking and its waking.
func TestCommandsWhileParking(t *testing.T) {
	rt := parkingRuntime(t, tack.WithPassivateAfter(time.Millisecond))
	script := json.RawMessage(`{"turns":[{"text":"one"}]}`)
	const sessions, rounds = 4, 300
	var wg sync.WaitGroup
	for i := range sessions {
		s, err := rt.Spawn(tack.SessionConfig{ID: fmt.Sprintf("w%d", i), Script: script})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			wg.Go(func() { poke(t, s, rounds) })
		}
	}
	wg.Wait()
}

// poke asks s its state rounds times, 0 to 2 ms apart: commands that
// wake a session that parks a millisecond after each. An error fails t.
func poke(t *testing.T, s *tack.Session, rounds int) {
	for r := range rounds {
		if _, err := s.State(t.Context()); err != nil {
			t.Errorf("state %d of %s: %v", r, s.ID(), err)
			return
		}
		time.Sleep(time.Duration(r%3) * time.Millisecond)
	}
}

// TestCloseWhileWaking: a session made parked is woken by its first
// command, and a Close may follow at once, by its user or by no one in
// particular: Close waits for the wake and ends the session. Closing
// found it neither loaded nor parked (the restore had taken the record)
// and returned with the session coming back (a hunt's test: about 40 of
// 200 survived).
func TestCloseWhileWaking(t *testing.T) {
	for _, user := range []string{"ann", ""} {
		t.Run("user="+user, func(t *testing.T) {
			rt := parkingRuntime(t, tack.WithPassivateAfter(time.Hour))
			script := json.RawMessage(`{"turns":[{"text":"one"}]}`)
			ctx := t.Context()
			if user != "" {
				ctx = tack.ForUser(ctx, user)
			}
			survived := 0
			const n = 200
			for i := range n {
				id := fmt.Sprintf("c%d", i)
				s, err := rt.Spawn(tack.SessionConfig{ID: id, User: "ann", Script: script})
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					_, _ = s.State(ctx)
				}()
				time.Sleep(time.Duration(i%5) * 20 * time.Microsecond)
				if err := s.CloseContext(ctx); err != nil {
					t.Fatalf("close: %v", err)
				}
				<-done
				if _, err := rt.Session(id); codeOf(err) != events.CodeInvalidSession {
					survived++
				}
			}
			if survived > 0 {
				t.Fatalf("%d of %d sessions whose Close returned nil are still there", survived, n)
			}
		})
	}
}

// TestUserWhileParking: a session's owner is known at every point of its
// parking and waking. User looked in the registry, then at the record:
// a session woken in between, whose record the restore had just taken,
// was invalid_session, and a server's owner check answered 404 for a
// session that existed (a hunt's stress test).
func TestUserWhileParking(t *testing.T) {
	rt := parkingRuntime(t, tack.WithPassivateAfter(time.Millisecond))
	script := json.RawMessage(`{"turns":[{"text":"one"}]}`)
	const sessions, rounds = 4, 300
	var wg sync.WaitGroup
	for i := range sessions {
		s, err := rt.Spawn(tack.SessionConfig{ID: fmt.Sprintf("u%d", i), User: "alice", Script: script})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { poke(t, s, rounds) })
		wg.Go(func() {
			for range rounds * 2 {
				if u, err := rt.User(t.Context(), s.ID()); err != nil || u != "alice" {
					t.Errorf("User(%s) = %q, %v; want alice", s.ID(), u, err)
					return
				}
				time.Sleep(500 * time.Microsecond)
			}
		})
	}
	wg.Wait()
}

// aliasModels answers to "alias" with a model named "aliased", which it
// does not know by that name, and to "plain" with a model named so: a
// resolver that does not have its own models again (llm.Resolver).
type aliasModels struct{}

func (aliasModels) Resolve(name string, _ json.RawMessage) (*llm.Model, error) {
	if name != "alias" && name != "plain" {
		return nil, &llm.UnknownModelError{Name: name}
	}
	m, err := script.NewResolver("").Resolve("", json.RawMessage(`{"turns":[{"text":"one"},{"text":"two"},{"text":"three"}]}`))
	if err != nil {
		return nil, err
	}
	m.Name = map[string]string{"alias": "aliased", "plain": "plain"}[name]
	return m, nil
}

// TestSessionOnAModelNotHadAgainStaysLoaded: a session whose model the
// resolver would not give again for its name — the name a woken session
// is resolved from — is made loaded in a runtime that parks and never
// parks, where it would have woken without its model; switched to a
// model that is had again, it parks and wakes on that model.
func TestSessionOnAModelNotHadAgainStaysLoaded(t *testing.T) {
	rt := parkingRuntime(t, tack.WithModels(aliasModels{}))
	a, err := rt.Spawn(tack.SessionConfig{ID: "a", Model: "alias"})
	if err != nil {
		t.Fatal(err)
	}
	if !rt.Loaded("a") {
		t.Fatal("a session on a model not had again by its name was made parked")
	}
	runOnce(t, a, "first")
	// A witness that ran after a parks twice: a session parks within two
	// of the runtime's quiet periods, so a has been quiet long enough.
	w, err := rt.Spawn(tack.SessionConfig{ID: "w", Model: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"witness", "again"} {
		runOnce(t, w, text)
		waitUnloaded(t, rt, "w")
	}
	if !rt.Loaded("a") {
		t.Fatal("the session on a model not had again parked")
	}
	runOnce(t, a, "second")

	if err := a.SwitchModel(t.Context(), "plain"); err != nil {
		t.Fatal(err)
	}
	waitUnloaded(t, rt, "a")
	runOnce(t, a, "third") // it wakes on plain
	st, err := a.State(t.Context())
	if err != nil || st.GetModel() != "plain" {
		t.Fatalf("woken on %q (%v), want plain", st.GetModel(), err)
	}
}

// TestListWhileWaking: sessions made parked, woken one after another
// while they are listed: every list holds every session, once. A list
// read the loaded sessions, then the parked ones, and missed a session
// woken in between, which was in neither.
func TestListWhileWaking(t *testing.T) {
	rt := parkingRuntime(t, tack.WithPassivateAfter(time.Hour))
	handles := spawnEach(t, rt, "l", 100) // a page
	woken := make(chan struct{})
	go func() {
		defer close(woken)
		for i, s := range handles {
			if _, err := s.State(t.Context()); err != nil {
				t.Errorf("state of %s: %v", s.ID(), err)
				return
			}
			time.Sleep(time.Duration(i%3) * 500 * time.Microsecond)
		}
	}()
	for lists := 0; ; lists++ {
		select {
		case <-woken:
			t.Logf("%d lists while the sessions woke", lists)
			return
		default:
		}
		listsEach(t, rt, handles, lists)
	}
}

// TestListWhileParking: sessions that wake and park again all the time,
// listed all the while: every list holds every session, once. A session
// in the middle of parking — out of the registry, its record not yet in
// the Park — was in neither of the two a list reads, until the list read
// the sessions whose actors answer, those parking included. (A session
// that both wakes and parks again while one list is read can still be
// missed; parking takes the runtime's quiet period, here 40 ms, and a
// list of these sessions well under a millisecond, which leaves a busy
// machine room to stall.)
func TestListWhileParking(t *testing.T) {
	rt := parkingRuntime(t, tack.WithPassivateAfter(40*time.Millisecond))
	handles := spawnEach(t, rt, "p", 16)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range handles {
		wg.Go(func() {
			for r := i; ; r++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.State(t.Context()); err != nil {
					t.Errorf("state of %s: %v", s.ID(), err)
					return
				}
				time.Sleep(time.Duration(r%4) * 25 * time.Millisecond) // parks in the longer gaps
			}
		})
	}
	defer wg.Wait()
	defer close(stop)
	for l, end := 0, time.Now().Add(1500*time.Millisecond); time.Now().Before(end); l++ {
		listsEach(t, rt, handles, l)
	}
}

// TestReadsWhileParking: reads that find a session's actor and then ask
// it — export, fork, the agent it was made of — on sessions that park a
// millisecond after each: none fails. The actor found could park before
// it answered, and the read said the session did not exist (about one
// read in 5,000).
func TestReadsWhileParking(t *testing.T) {
	rt := parkingRuntime(t, tack.WithPassivateAfter(time.Millisecond))
	ctx := t.Context()
	var wg sync.WaitGroup
	for n := range 8 {
		s, err := rt.Spawn(tack.SessionConfig{ID: fmt.Sprintf("r%d", n), Script: json.RawMessage(`{"turns":[{"text":"one"}]}`)})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for i := range 1000 {
				if _, err := s.Export(ctx); err != nil {
					t.Errorf("export %d of %s: %v", i, s.ID(), err)
					return
				}
				if _, err := s.Agent(ctx); err != nil {
					t.Errorf("agent %d of %s: %v", i, s.ID(), err)
					return
				}
				if i%100 == 0 {
					f, err := s.Fork(ctx, 0, "")
					if err != nil {
						t.Errorf("fork %d of %s: %v", i, s.ID(), err)
						return
					}
					f.Close()
				}
				time.Sleep(time.Millisecond + time.Duration(i%7)*50*time.Microsecond)
			}
		})
	}
	wg.Wait()
}

// spawnEach makes n sessions on a one-turn script, with ids prefix000,
// prefix001...
func spawnEach(t *testing.T, rt *tack.Runtime, prefix string, n int) []*tack.Session {
	t.Helper()
	script := json.RawMessage(`{"turns":[{"text":"one"}]}`)
	handles := make([]*tack.Session, n)
	for i := range handles {
		s, err := rt.Spawn(tack.SessionConfig{ID: fmt.Sprintf("%s%03d", prefix, i), Script: script})
		if err != nil {
			t.Fatal(err)
		}
		handles[i] = s
	}
	return handles
}

// listsEach lists rt's sessions (list l of a test) and fails unless each
// of handles is listed once.
func listsEach(t *testing.T, rt *tack.Runtime, handles []*tack.Session, l int) {
	t.Helper()
	list, err := rt.List(t.Context(), tack.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, s := range list.Sessions {
		seen[s.Session]++
	}
	for _, s := range handles {
		if seen[s.ID()] != 1 {
			t.Fatalf("list %d: %s listed %d times", l, s.ID(), seen[s.ID()])
		}
	}
}
