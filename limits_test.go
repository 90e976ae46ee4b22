package tack_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/askuser"
	"github.com/tack-run/tack/policy"
	"github.com/tack-run/tack/store/memory"
)

// TestMaxSessions: a user has at most max_sessions open; closing one
// makes room; forks count (sub-agents too: TestSubAgentsCountTowardMaxSessions), other users are apart.
func TestMaxSessions(t *testing.T) {
	rt := grantsRuntime(t, &policy.Policy{Limits: policy.Limits{"*": {MaxSessions: 2}, "carol": {MaxSessions: 3}}})
	ctx := t.Context()
	inline := json.RawMessage(`{"turns":[{"text":"hi"}]}`)
	spawn := func(id, user string) error {
		_, err := rt.Spawn(tack.SessionConfig{ID: id, User: user, Script: inline})
		return err
	}
	const full = "rate_limited: alice has 2 sessions open, the most allowed (max_sessions): close one first"
	steps := []struct {
		name string
		do   func() error
		err  string
	}{
		{"alice's first", func() error { return spawn("a1", "alice") }, ""},
		{"alice's second", func() error { return spawn("a2", "alice") }, ""},
		{"alice's third", func() error { return spawn("a3", "alice") }, full},
		{"bob's first", func() error { return spawn("b1", "bob") }, ""},
		{"a fork of alice's", func() error {
			s, _ := rt.Session("a1")
			_, err := s.Fork(ctx, 0, "a4")
			return err
		}, full},
		{"alice closes one", func() error { s, _ := rt.Session("a2"); s.Close(); return nil }, ""},
		{"and makes another", func() error { return spawn("a5", "alice") }, ""},
		{"carol's own limit", func() error {
			for _, id := range []string{"c1", "c2", "c3"} {
				if err := spawn(id, "carol"); err != nil {
					return err
				}
			}
			return spawn("c4", "carol")
		}, "rate_limited: carol has 3 sessions open, the most allowed (max_sessions): close one first"},
	}
	for _, s := range steps {
		err := s.do()
		if s.err == "" && err != nil || s.err != "" && (err == nil || err.Error() != s.err) {
			t.Fatalf("%s: %v, want %q", s.name, err, s.err)
		}
	}
}

// TestMaxRunning: a prompt or steer that would start a run past
// max_running is refused, changing nothing; prompts to a busy session
// queue as ever; once a run ends another may start; sub-agents' runs are
// their parent's while its call waits for them, their owner's after.
func TestMaxRunning(t *testing.T) {
	rt := grantsRuntime(t, &policy.Policy{Limits: policy.Limits{"alice": {MaxRunning: 1}}})
	ctx := t.Context()
	stall := json.RawMessage(`{"turns":[{"text":"a","stall_ms":60000}]}`)
	a, err := rt.Spawn(tack.SessionConfig{ID: "a", User: "alice", Script: stall})
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.Spawn(tack.SessionConfig{ID: "b", User: "alice", Script: json.RawMessage(`{"turns":[{"text":"b"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	bob, err := rt.Spawn(tack.SessionConfig{ID: "bob", User: "bob", Script: stall})
	if err != nil {
		t.Fatal(err)
	}
	ends, err := a.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	const full = "rate_limited: alice has 1 runs in progress, the most allowed (max_running): wait for one to end"
	check := func(name string, err error, want string) {
		t.Helper()
		if want == "" && err != nil || want != "" && (err == nil || err.Error() != want) {
			t.Fatalf("%s: %v, want %q", name, err, want)
		}
	}
	_, err = a.Prompt(ctx, "one")
	check("alice's first run", err, "")
	queued, err := a.Prompt(ctx, "then")
	check("a prompt to the busy session queues", err, "")
	if !queued {
		t.Fatal("the prompt to the busy session was not queued")
	}
	_, err = b.Prompt(ctx, "two")
	check("alice's second run", err, full)
	_, err = b.Steer(ctx, "two", tack.SteerOptions{})
	check("a steer that would start one", err, full)
	_, err = bob.Prompt(ctx, "bob's")
	check("bob's run", err, "")
	if st, _ := b.State(ctx); st.State != "idle" || st.MessageCount != 0 {
		t.Fatalf("the refused session changed: %v", st)
	}
	check("alice aborts hers", a.Abort(ctx, tack.AbortOptions{ClearQueue: true}), "")
	<-ends.C
	_, err = b.Prompt(ctx, "two")
	check("and may start another", err, "")

	// A sub-agent's run is its parent's: with max_running 1 the parent's
	// call still runs its child.
	rt2 := grantsRuntime(t, &policy.Policy{Limits: policy.Limits{"*": {MaxRunning: 1}}})
	p2, err := rt2.Spawn(tack.SessionConfig{ID: "p", User: "carol", Tools: []string{"subagent"},
		Script:    json.RawMessage(`{"turns":[{"tool_calls":[{"name":"subagent","args":{"task":"t"}}]},{"text":"done"}]}`),
		Subagents: &tack.SubagentConfig{Model: "local/good"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := lastTool(t, p2); got != "from good" {
		t.Fatalf("the sub-agent's result under max_running 1: %q", got)
	}
	// Once no call waits for it, the child runs for its owner when she
	// prompts it, and counts as any session's run: otherwise one session
	// could start children, then run them all at once.
	c, err := rt2.Spawn(tack.SessionConfig{ID: "c", User: "carol", Script: stall})
	if err != nil {
		t.Fatal(err)
	}
	cEnds, err := c.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Prompt(ctx, "carol's run")
	check("carol's run", err, "")
	child, err := rt2.Session("p/sub-1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = child.Prompt(ctx, "run for me")
	check("carol prompts the child herself", err, "rate_limited: carol has 1 runs in progress, the most allowed (max_running): wait for one to end")
	check("carol aborts hers", c.Abort(ctx, tack.AbortOptions{}), "")
	<-cEnds.C
	_, err = child.Prompt(ctx, "run for me")
	check("and may prompt the child", err, "")
}

// TestRestoredPausedRunCounts: a run paused for a person counts against
// max_running until it ends, also while its session is closed: another
// run is refused meanwhile, the restored run takes its place up, and a
// prompt that supersedes it takes the place in turn. A deleted session
// gives its place back. Before, a close gave the place back, and a user
// who closed such sessions one after another could have them all run at
// once once restored and answered.
func TestRestoredPausedRunCounts(t *testing.T) {
	rt := grantsRuntime(t, &policy.Policy{Limits: policy.Limits{"alice": {MaxRunning: 1}}},
		tack.WithStore(memory.New()), tack.WithNode("n"))
	ctx := t.Context()
	asks := json.RawMessage(`{"turns":[{"tool_calls":[{"name":"ask_user","args":{"question":"q"}}]},{"text":"a"}]}`)
	a, err := rt.Spawn(tack.SessionConfig{ID: "a", User: "alice", Plugins: []plugins.Config{{Name: askuser.Name}}, Script: asks})
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.Spawn(tack.SessionConfig{ID: "b", User: "alice", Script: json.RawMessage(`{"turns":[{"text":"b"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	paused := func(s *tack.Session) {
		t.Helper()
		eventually.Within(t, 5*time.Second, func() error {
			st, err := s.State(ctx)
			if err != nil || st.State != "idle" || st.RunId == nil {
				return fmt.Errorf("session %s is not paused with its run: %v, %v", s.ID(), st, err)
			}
			return nil
		})
	}
	if _, err := a.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	paused(a) // on the question
	a.Close() // its run keeps its place while it is not loaded
	if _, err := b.Prompt(ctx, "b"); tack.Code(err) != "rate_limited" {
		t.Fatalf("b's run while a's paused run is closed: %v, want rate_limited", err)
	}
	if a, err = rt.Session("a"); err != nil {
		t.Fatal(err)
	}
	paused(a)
	if _, err := b.Prompt(ctx, "b"); tack.Code(err) != "rate_limited" {
		t.Fatalf("b's run while a's restored paused run waits: %v, want rate_limited", err)
	}
	ends, err := a.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(ctx, "again", tack.PromptOptions{IfBusy: events.IfBusyInterrupt}); err != nil {
		t.Fatalf("a prompt taking the place of a's paused run: %v", err)
	}
	for n := 0; n < 2; { // the paused run's end, then again's
		if ev := <-ends.C; ev.GetAgentEnd() != nil {
			n++
		}
	}
	if _, err := b.Prompt(ctx, "b"); err != nil {
		t.Fatalf("b's run once a's ended: %v", err)
	}

	c, err := rt.Spawn(tack.SessionConfig{ID: "c", User: "alice", Plugins: []plugins.Config{{Name: askuser.Name}}, Script: asks})
	if err != nil {
		t.Fatal(err)
	}
	eventually.Within(t, 5*time.Second, func() error {
		_, err := c.Prompt(ctx, "go") // once b's run is over
		return err
	})
	paused(c)
	c.Close()
	if err := rt.Delete(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Prompt(ctx, "b"); err != nil {
		t.Fatalf("b's run once the closed paused session was deleted: %v", err)
	}
}

// TestRestoreCountsAgainstMaxSessions: a session that comes back — after
// a close, with a store, or after a passivation parked it, without one —
// takes a place like a new one: past max_sessions its restore is refused
// with rate_limited and leaves it as stored (or parked), and once the
// user closes another it comes back whole.
func TestRestoreCountsAgainstMaxSessions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []tack.Option
		// away takes alice's session a out of the process, as the user
		// or the runtime would.
		away func(t *testing.T, rt *tack.Runtime, a *tack.Session)
	}{
		{"closed, stored", []tack.Option{tack.WithStore(memory.New()), tack.WithNode("n")},
			func(_ *testing.T, _ *tack.Runtime, a *tack.Session) { a.Close() }},
		{"passivated, parked", []tack.Option{tack.WithPassivateAfter(20 * time.Millisecond)},
			func(t *testing.T, rt *tack.Runtime, a *tack.Session) {
				eventually.Within(t, 5*time.Second, func() error {
					if rt.Loaded("a") {
						return fmt.Errorf("a is still loaded")
					}
					return nil
				})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := grantsRuntime(t, &policy.Policy{Limits: policy.Limits{"alice": {MaxSessions: 1}}}, tc.opts...)
			ctx := t.Context()
			a, err := rt.Spawn(tack.SessionConfig{ID: "a", User: "alice", Script: json.RawMessage(`{"turns":[{"text":"a1"},{"text":"a2"}]}`)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Prompt(ctx, "first"); err != nil {
				t.Fatal(err)
			}
			eventually.Within(t, 5*time.Second, func() error {
				if n, err := a.Messages(ctx); err != nil || len(n) != 2 {
					return fmt.Errorf("a has %d messages (%v), want 2", len(n), err)
				}
				return nil
			})
			tc.away(t, rt, a)
			// A parking session counts until its actor has stopped, a
			// moment after it is no longer loaded.
			var b *tack.Session
			eventually.Within(t, 5*time.Second, func() error {
				b, err = rt.Spawn(tack.SessionConfig{ID: "b", User: "alice", Script: json.RawMessage(`{"turns":[{"text":"b","stall_ms":60000}]}`)})
				if err != nil {
					return fmt.Errorf("alice's second session while her first is away: %w", err)
				}
				return nil
			})
			if _, err := b.Prompt(ctx, "keep b busy"); err != nil { // never quiet: never passivated
				t.Fatal(err)
			}
			const refused = "rate_limited: alice has 1 sessions open, the most allowed (max_sessions): close one first"
			if _, err := rt.State(ctx, "a"); err == nil || err.Error() != refused {
				t.Fatalf("a's restore with b open: %v, want %q", err, refused)
			}
			if rt.Loaded("a") {
				t.Fatal("a refused, yet loaded")
			}
			if _, err := rt.Spawn(tack.SessionConfig{ID: "c", User: "alice", Script: json.RawMessage(`{"turns":[{"text":"c"}]}`)}); tack.Code(err) != "rate_limited" {
				t.Fatalf("a third session after the refused restore: %v, want rate_limited", err)
			}
			b.Close()
			msgs, err := rt.Messages(ctx, "a")
			if err != nil || len(msgs) != 2 {
				t.Fatalf("a once b is closed: %d messages, %v; want its 2", len(msgs), err)
			}
			if _, err := rt.Spawn(tack.SessionConfig{ID: "c", User: "alice", Script: json.RawMessage(`{"turns":[{"text":"c"}]}`)}); tack.Code(err) != "rate_limited" {
				t.Fatalf("another session once a is back: %v, want rate_limited", err)
			}
		})
	}
}

// TestRacingRestoresAndCreatesKeepMaxSessions: restores and creates of one
// user, all at once, never load more than max_sessions: each one counts
// before the next is admitted, and exactly as many succeed as there are
// places.
func TestRacingRestoresAndCreatesKeepMaxSessions(t *testing.T) {
	const limit, stored, fresh = 3, 8, 4
	rt := grantsRuntime(t, &policy.Policy{Limits: policy.Limits{"alice": {MaxSessions: limit}}}, tack.WithStore(memory.New()), tack.WithNode("n"))
	ctx := t.Context()
	script := json.RawMessage(`{"turns":[{"text":"hi"}]}`)
	for i := range stored {
		s, err := rt.Spawn(tack.SessionConfig{ID: fmt.Sprintf("old-%d", i), User: "alice", Script: script})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	var wg sync.WaitGroup
	var ok, limited atomic.Int32
	count := func(err error) {
		switch {
		case err == nil:
			ok.Add(1)
		case tack.Code(err) == "rate_limited":
			limited.Add(1)
		default:
			t.Error(err)
		}
	}
	for i := range stored {
		wg.Go(func() {
			_, err := rt.State(ctx, fmt.Sprintf("old-%d", i))
			count(err)
		})
	}
	for i := range fresh {
		wg.Go(func() {
			_, err := rt.Spawn(tack.SessionConfig{ID: fmt.Sprintf("new-%d", i), User: "alice", Script: script})
			count(err)
		})
	}
	wg.Wait()
	if ok.Load() != limit || limited.Load() != stored+fresh-limit {
		t.Errorf("%d admitted and %d refused, want %d and %d", ok.Load(), limited.Load(), limit, stored+fresh-limit)
	}
	if n := len(rt.Sessions()); n != limit {
		t.Errorf("%d sessions loaded (%v), want %d", n, rt.Sessions(), limit)
	}
}

// TestRestoredSubAgentCounts: a sub-agent is a session like any, its
// restore admitted against max_sessions and counted like its making:
// otherwise one session could make children one call at a time, each
// unloaded once done, and then load them all.
func TestRestoredSubAgentCounts(t *testing.T) {
	rt := grantsRuntime(t, &policy.Policy{Limits: policy.Limits{"alice": {MaxSessions: 2}}}, tack.WithStore(memory.New()), tack.WithNode("n"))
	ctx := t.Context()
	p, err := rt.Spawn(tack.SessionConfig{ID: "p", User: "alice", Tools: []string{"subagent"},
		Script:    json.RawMessage(`{"turns":[{"tool_calls":[{"name":"subagent","args":{"task":"a"}}]},{"tool_calls":[{"name":"subagent","args":{"task":"b"}}]},{"text":"done"}]}`),
		Subagents: &tack.SubagentConfig{Model: "local/good"}})
	if err != nil {
		t.Fatal(err)
	}
	if res := lastTool(t, p); strings.Contains(res, "rate_limited") {
		t.Fatalf("the second child, made once the first was done: %s", res)
	}
	eventually.Within(t, 5*time.Second, func() error {
		if rt.Loaded("p/sub-1") || rt.Loaded("p/sub-2") {
			return fmt.Errorf("the children are still loaded: %v", rt.Sessions())
		}
		return nil
	})
	const refused = "rate_limited: alice has 2 sessions open, the most allowed (max_sessions): close one first"
	if _, err := rt.State(ctx, "p/sub-1"); err != nil {
		t.Fatalf("restoring a child beside p: %v", err)
	}
	if _, err := rt.State(ctx, "p/sub-2"); err == nil || err.Error() != refused {
		t.Fatalf("restoring the other child while p and the first are open: %v, want %q", err, refused)
	}
	p.Close()
	if _, err := rt.State(ctx, "p/sub-2"); err != nil {
		t.Fatalf("restoring it once p is closed: %v", err)
	}
	if _, err := rt.Spawn(tack.SessionConfig{ID: "q", User: "alice", Script: json.RawMessage(`{"turns":[{"text":"q"}]}`)}); tack.Code(err) != "rate_limited" {
		t.Fatalf("a new session while two restored children are open: %v, want rate_limited", err)
	}
}

// TestSubAgentsCountTowardMaxSessions: a parent's call makes a session
// like any other, admitted against its user's max_sessions while it is
// loaded. Counted for nothing, one script's batch of subagent calls made
// as many sessions as it listed (and, nested, that many to the power of
// the depth) past any bound; past the bound a call now gets an error
// result naming it, and the run goes on.
func TestSubAgentsCountTowardMaxSessions(t *testing.T) {
	rt := grantsRuntime(t, &policy.Policy{Limits: policy.Limits{"alice": {MaxSessions: 3}}})
	const calls = 12
	var tcs []string
	for i := range calls {
		tcs = append(tcs, fmt.Sprintf(`{"name":"subagent","args":{"task":"t%d"}}`, i))
	}
	script := `{"turns":[{"tool_calls":[` + strings.Join(tcs, ",") + `]},{"text":"done"}],"when_exhausted":"repeat_last"}`
	p, err := rt.Spawn(tack.SessionConfig{ID: "p", User: "alice", Tools: []string{"subagent"}, Script: json.RawMessage(script),
		Subagents: &tack.SubagentConfig{Model: "local/good"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := p.Subscribe(t.Context(), tack.SubscribeOptions{Types: []string{"tool_execution_end", "agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := p.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	const refused = "rate_limited: alice has 3 sessions open, the most allowed (max_sessions): close one first"
	ok, limited := 0, 0
	for ev := range sub.C {
		if ev.GetAgentEnd() != nil {
			break
		}
		end := ev.GetToolExecutionEnd()
		switch {
		case end.GetOk():
			ok++
		case strings.HasSuffix(end.GetResult(), refused):
			limited++
		default:
			t.Fatalf("a call's result: %q", end.GetResult())
		}
	}
	if ok != 2 || limited != calls-2 {
		t.Fatalf("%d children made and %d refused, want 2 and %d", ok, limited, calls-2)
	}
	if loaded := rt.Sessions(); len(loaded) != 3 {
		t.Fatalf("alice has %d sessions loaded, want 3: %v", len(loaded), loaded)
	}
}
