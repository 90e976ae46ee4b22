package tack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store/postgres"
	"github.com/tack-run/tack/store/postgres/pgtest"
)

// pgServer is a PostgreSQL server of the test's own that it may stop and
// start: .ci/run starts it and exports its DSN and a command controlling it.
type pgServer struct {
	t   *testing.T
	dsn string
	ctl string
}

func stoppableServer(t *testing.T) *pgServer {
	base, ctl := pgtest.FromEnv(t, "TACK_TEST_POSTGRES_FAULTS"), pgtest.FromEnv(t, "TACK_TEST_PG_CTL")
	srv := &pgServer{t: t, dsn: pgtest.DSNOn(t, base), ctl: ctl}
	t.Cleanup(func() { srv.run("start") }) // before the schema is dropped, even if the test failed
	return srv
}

func (s *pgServer) run(action string) {
	s.t.Helper()
	out, err := exec.Command("sh", "-c", s.ctl+" "+action).CombinedOutput()
	if err != nil {
		s.t.Fatalf("%s the server: %v\n%s", action, err, out)
	}
}

// follower records what a subscriber is told of a session.
type follower struct {
	evs chan *eventsv1.Event
}

func follow(t *testing.T, s *tack.Session) *follower {
	sub, err := s.Subscribe(context.Background(), tack.SubscribeOptions{Buffer: 1 << 12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	f := &follower{evs: make(chan *eventsv1.Event, 1<<12)}
	go func() {
		for ev := range sub.C {
			f.evs <- ev
		}
		close(f.evs)
	}()
	return f
}

// next waits for the next event ok accepts and returns it, with every
// event before it.
func (f *follower) next(t *testing.T, what string, ok func(*eventsv1.Event) bool) (*eventsv1.Event, []*eventsv1.Event) {
	t.Helper()
	var seen []*eventsv1.Event
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev, open := <-f.evs:
			if !open {
				t.Fatalf("the subscription ended before %s", what)
			}
			seen = append(seen, ev)
			if ok(ev) {
				return ev, seen
			}
		case <-deadline:
			t.Fatalf("no %s; told meanwhile: %v", what, seen)
		}
	}
}

func isEnd(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil }

// committed collects the messages told committed, by index.
func committed(told map[int32]*eventsv1.Message, evs []*eventsv1.Event) {
	for _, ev := range evs {
		if c := ev.GetMessageCommitted(); c != nil {
			told[c.Index] = c.Message
		}
	}
}

func codeOf(err error) string {
	var e *tack.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// TestPostgresStopsMidRun: a real PostgreSQL server stops while a tool
// runs. The prompt queued meanwhile is refused with store_failed within
// the command timeout, the session reports error store_failed and ends
// the run with error, reads keep answering, and a session of another
// runtime keeps working. Once the server is back, the next prompt runs to
// its end without restarting anything; a new runtime then restores a
// valid history that holds exactly what was accepted.
func TestPostgresStopsMidRun(t *testing.T) {
	srv := stoppableServer(t)
	ctx := context.Background()
	st, err := postgres.Open(ctx, srv.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rt, err := tack.New(tack.WithStore(st), tack.WithNode("n1"))
	if err != nil {
		t.Fatal(err)
	}
	var closeOnce sync.Once // Runtime.Close must run once
	closeRT := func() { closeOnce.Do(rt.Close) }
	defer closeRT()
	s, err := rt.Spawn(tack.SessionConfig{ID: "s1", Script: json.RawMessage(`{"turns":[
		{"text":"one done","chunk_size":2,"chunk_delay_ms":1},
		{"text":"calling","tool_calls":[{"name":"sleep","args":{"ms":60000}}]},
		{"text":"three done"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	f := follow(t, s)
	told := map[int32]*eventsv1.Message{}

	if _, err := s.Prompt(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	_, evs := f.next(t, "the end of run one", isEnd)
	committed(told, evs)
	if _, err := s.Prompt(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	// The tool runs once its call is stored and told.
	_, evs = f.next(t, "the tool's start", func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil })
	committed(told, evs)
	if len(told) != 4 {
		t.Fatalf("%d messages told before the outage, want 4", len(told))
	}

	srv.run("stop")
	start := time.Now()
	if _, err := s.Prompt(ctx, "queued while the server is down"); codeOf(err) != "store_failed" {
		t.Fatalf("prompt while the server is down: %v, want store_failed", err)
	}
	t.Logf("refused in %v", time.Since(start))
	_, evs = f.next(t, "the run's end", isEnd)
	committed(told, evs)
	e := findType(evs, "error")
	if e == nil || e.GetError().Code != "store_failed" || evs[len(evs)-1].GetAgentEnd().Reason != "error" {
		t.Fatalf("told while the server went down: %v", evs)
	}
	if findType(evs, "prompt_queued") != nil {
		t.Fatalf("prompt_queued told for a prompt that was not stored: %v", evs)
	}

	// Down: reads answer, writes are refused, other sessions work.
	state, err := s.State(ctx)
	if err != nil || state.State != "idle" || state.MessageCount != 5 || len(state.PromptQueue) != 0 {
		t.Fatalf("get_state while down: %v, %v", state, err)
	}
	if _, err := s.Messages(ctx); err != nil {
		t.Fatalf("get_messages while down: %v", err)
	}
	if _, err := s.Steer(ctx, "refused", tack.SteerOptions{}); codeOf(err) != "store_failed" {
		t.Fatalf("steer while down: %v, want store_failed", err)
	}
	other, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	o, err := other.Spawn(tack.SessionConfig{Script: json.RawMessage(`{"turns":[{"text":"fine"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	of := follow(t, o)
	if _, err := o.Prompt(ctx, "still there?"); err != nil {
		t.Fatalf("another runtime's session while the server is down: %v", err)
	}
	if end, _ := of.next(t, "the other session's end", isEnd); end.GetAgentEnd().Reason != "completed" {
		t.Fatalf("the other session's run: %v", end)
	}

	// Back: the next prompt is taken (a few may still be refused while
	// the pool reconnects) and runs to its end.
	srv.run("start")
	eventually.Within(t, 20*time.Second, func() error {
		_, err := s.Prompt(ctx, "three")
		if err == nil {
			return nil
		}
		if codeOf(err) != "store_failed" { // a few are refused while the pool reconnects; nothing else
			t.Fatalf("prompt once the server is back: %v", err)
		}
		return fmt.Errorf("prompt once the server is back: %w", err)
	})
	end, evs := f.next(t, "run three's end", isEnd)
	committed(told, evs)
	if end.GetAgentEnd().Reason != "completed" {
		t.Fatalf("run three: %v", end)
	}
	for _, ev := range evs {
		if ev.GetError() != nil {
			t.Fatalf("an error told once the server was back: %v", ev)
		}
	}
	closeRT()
	st.Close()

	// A new runtime restores exactly what was accepted.
	st2, err := postgres.Open(ctx, srv.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	rt2, err := tack.New(tack.WithStore(st2), tack.WithNode("n1"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	restored, err := rt2.Session("s1")
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := restored.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := llm.Validate(msgs); err != nil {
		t.Fatalf("restored history invalid: %v", err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+":"+m.Content)
	}
	want := []string{"user:one", "assistant:one done", "user:two", "assistant:calling",
		"tool:interrupted: the store failed", "user:three", "assistant:three done"}
	if !slices.Equal(got, want) {
		t.Fatalf("restored history %q, want %q", got, want)
	}
	for i, m := range told {
		if int(i) >= len(msgs) || msgs[i].Content != m.Content || msgs[i].Role != m.Role {
			t.Fatalf("message %d was told committed (%v) but the store has %q", i, m, got)
		}
	}
	if strings.Contains(strings.Join(got, "\n"), "refused") || strings.Contains(strings.Join(got, "\n"), "queued") {
		t.Fatalf("a refused command was stored: %q", got)
	}
}

// findType returns the first event of type name in evs, or nil.
func findType(evs []*eventsv1.Event, name string) *eventsv1.Event {
	for _, ev := range evs {
		if events.Type(ev) == name {
			return ev
		}
	}
	return nil
}
