package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// TestSubagentAcrossARestart: a process that dies while a sub-agent
// works leaves a parent whose call is answered as any interrupted call
// and a child restored on its own; the parent's next sub-agent gets a new
// id, and its usage counts go on from what was stored.
func TestSubagentAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	slow, fast := filepath.Join(dir, "slow.json"), filepath.Join(dir, "fast.json")
	for path, script := range map[string]string{
		slow: `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":30000}}]},{"text":"never"}]}`,
		fast: `{"turns":[{"text":"fine","usage":{"input_tokens":7,"output_tokens":3}}]}`,
	} {
		if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	parent := fmt.Sprintf(`{"turns":[
		{"tool_calls":[{"name":"subagent","args":{"task":"wait"}}]},
		{"tool_calls":[{"name":"subagent","args":{"task":"answer","model":"script:%s"}}]},
		{"text":"done"}]}`, "fast.json")

	mem := memory.New()
	st := &crashable{Store: mem, dead: make(chan struct{})}
	first, err := tack.New(tack.WithStore(st), tack.WithNode("n"), tack.WithScriptDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(st.dead); first.Close() })
	s, err := first.Spawn(tack.SessionConfig{ID: "p", Script: json.RawMessage(parent), Tools: []string{"subagent"},
		Subagents: &tack.SubagentConfig{Model: "script:slow.json"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"sub_agent_event"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	for ev := range sub.C {
		if ev.GetSubAgentEvent().GetEvent().GetToolExecutionStart() != nil {
			break
		}
	}
	st.crash()

	rt, err := tack.New(tack.WithStore(mem), tack.WithNode("n"), tack.WithRequestTimeout(5*time.Second), tack.WithScriptDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := rt.Messages(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(roles(msgs)); got != "[user:go assistant: tool:interrupted: process restarted]" {
		t.Fatalf("the parent after the restart: %s", got)
	}
	msgs, err = rt.Messages(ctx, "p/sub-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(roles(msgs)); got != "[user:wait assistant: tool:interrupted: process restarted]" {
		t.Fatalf("the child after the restart: %s", got)
	}
	child, err := rt.State(ctx, "p/sub-1")
	if err != nil || child.State != "idle" || child.Model != "script:slow.json" {
		t.Fatalf("the child's state: %v, %v", child, err)
	}

	// The parent goes on: its next sub-agent is p/sub-2.
	p, err := rt.Session("p")
	if err != nil {
		t.Fatal(err)
	}
	end, err := p.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end", "subagent_start"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Prompt(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	var started []string
	for ev := range end.C {
		if s := ev.GetSubagentStart(); s != nil {
			started = append(started, s.ChildSession)
		}
		if ev.GetAgentEnd().GetRunId() == "r-2" { // r-1 ended interrupted, in the replay
			break
		}
	}
	if fmt.Sprint(started) != "[p/sub-2]" {
		t.Fatalf("sub-agents started after the restart: %v", started)
	}
	state, err := p.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if u := state.SubagentUsage; u.GetInputTokens() != 7 || u.GetOutputTokens() != 3 {
		t.Fatalf("subagent_usage %v, want the fast child's", u)
	}

	// The totals are stored: a third process shows them.
	rt.Close()
	third, err := tack.New(tack.WithStore(mem), tack.WithNode("n"), tack.WithScriptDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	again, err := third.State(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(again.SubagentUsage, state.SubagentUsage) || !proto.Equal(again.Usage, state.Usage) {
		t.Fatalf("after another restart: usage %v and %v, want %v and %v", again.Usage, again.SubagentUsage, state.Usage, state.SubagentUsage)
	}
}

// heldCreate is a store whose Create of a sub-agent waits until released,
// telling when it begins.
type heldCreate struct {
	store.Store
	begun, release chan struct{}
}

func (s heldCreate) Create(ctx context.Context, id string, cfg store.Config) error {
	if strings.Contains(id, "/sub-") {
		close(s.begun)
		<-s.release
	}
	return s.Store.Create(ctx, id, cfg)
}

// TestSubagentNotPromptedAfterAbort: a parent aborted while its sub-agent
// is being made (its store's write takes a while) leaves the child
// unprompted. Before, the child was prompted once made, after the
// parent's abort was answered, and made its model request and ran its
// tools.
func TestSubagentNotPromptedAfterAbort(t *testing.T) {
	st := heldCreate{Store: memory.New(), begun: make(chan struct{}), release: make(chan struct{})}
	rt, err := tack.New(tack.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := t.Context()
	script := `{"turns":[{"tool_calls":[{"name":"subagent","args":{"task":"work"}}]},{"tool_calls":[{"name":"echo","args":{"text":"side effect"}}]},{"text":"never"}]}`
	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(script), Tools: []string{"subagent", "echo"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	<-st.begun
	if err := s.Abort(ctx, tack.AbortOptions{}); err != nil {
		t.Fatal(err)
	}
	close(st.release)
	child := s.ID() + "/sub-1"
	eventually.Within(t, 10*time.Second, func() error {
		if _, err := rt.Session(child); err != nil {
			return err
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond) // a child prompted would have run by now
	c, err := rt.Session(child)
	if err != nil {
		t.Fatal(err)
	}
	if msgs, err := c.Messages(ctx); err != nil || len(msgs) > 0 {
		t.Fatalf("the child after its parent's abort: %d messages, %v; want none", len(msgs), err)
	}
}

// TestSubagentHandleOutlivesItsRun: a handle on a sub-agent taken while
// it runs still works once the runtime has unloaded the child at the end
// of its run (it stays stored): the command goes to it by id, and it is
// restored. Before, such a handle answered not_alive for good.
func TestSubagentHandleOutlivesItsRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "child.json"), []byte(`{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":300}}]},{"text":"child done"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(tack.WithStore(memory.New()), tack.WithScriptDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := t.Context()
	script := `{"turns":[{"tool_calls":[{"name":"subagent","args":{"task":"work","model":"script:child.json"}}]},{"text":"parent done"}]}`
	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(script), Tools: []string{"subagent"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"subagent_start", "agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	<-sub.C // subagent_start: the child is made (a lookup while it is made would restore it from its first record)
	child, err := rt.Session(s.ID() + "/sub-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := child.State(ctx); err != nil {
		t.Fatal(err)
	}
	<-sub.C // the parent's run is over, and the child's before it
	if st, err := child.State(ctx); err != nil || st.GetState() != "idle" {
		t.Fatalf("the handle taken while the child ran: %v, %v", st, err)
	}
	if msgs, err := child.Messages(ctx); err != nil || len(msgs) == 0 || msgs[len(msgs)-1].Content != "child done" {
		t.Fatalf("the child's messages through it: %v, %v", msgs, err)
	}
}

// TestClosedSessionEndsItsSubagents: in a runtime without a store, a
// closed session is gone, and its sub-agents, loaded or parked, go with
// it, as Delete takes them: they were left behind, listed and holding
// their ids, so that the next session of the parent's id — anyone's —
// could not start a sub-agent ("session exists"), and deleting it would
// have deleted the first owner's children.
func TestClosedSessionEndsItsSubagents(t *testing.T) {
	for _, parks := range []bool{false, true} {
		t.Run(map[bool]string{false: "loaded", true: "parked"}[parks], func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "child.json"), []byte(`{"turns":[{"text":"child done"}]}`), 0o600); err != nil {
				t.Fatal(err)
			}
			opts := []tack.Option{tack.WithScriptDir(dir)}
			if parks {
				opts = append(opts, tack.WithPassivateAfter(20*time.Millisecond))
			}
			rt, err := tack.New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			script := json.RawMessage(`{"turns":[
				{"tool_calls":[{"name":"subagent","args":{"task":"nest"}}]},
				{"text":"done"}]}`)
			for _, user := range []string{"ann", "bob"} {
				s, err := rt.Spawn(tack.SessionConfig{ID: "p", User: user, Script: script, Tools: []string{"subagent"},
					Subagents: &tack.SubagentConfig{Model: "script:child.json"}})
				if err != nil {
					t.Fatalf("%s: %v", user, err)
				}
				calledOK(t, s)
				if parks {
					waitUnloaded(t, rt, "p/sub-1")
				} else if !rt.Loaded("p/sub-1") {
					t.Fatal("no sub-agent p/sub-1")
				}
				if got := listed(t, rt); !slices.Equal(got, []string{"p", "p/sub-1"}) {
					t.Fatalf("%s: listed %v", user, got)
				}
				s.Close()
				if got := listed(t, rt); len(got) > 0 {
					t.Fatalf("%s: listed %v after the parent's close", user, got)
				}
			}
		})
	}
}

// calledOK prompts s and waits for its run to end, every tool call of it
// answered without an error.
func calledOK(t *testing.T, s *tack.Session) {
	t.Helper()
	if err := callsOK(t.Context(), s); err != nil {
		t.Fatal(err)
	}
}

// callsOK prompts s and waits for its run to end: an error names the
// first tool call answered with an error, or says the run did not end.
func callsOK(ctx context.Context, s *tack.Session) error {
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Since: ^uint64(0) >> 1, Types: []string{"tool_execution_end", "agent_end"}})
	if err != nil {
		return err
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, "go"); err != nil {
		return err
	}
	for {
		select {
		case ev := <-sub.C:
			if end := ev.GetToolExecutionEnd(); end != nil && !end.GetOk() {
				return fmt.Errorf("%s: a tool answered %q", s.ID(), end.GetResult())
			}
			if ev.GetAgentEnd() != nil {
				return nil
			}
		case <-time.After(30 * time.Second):
			return fmt.Errorf("%s: no agent_end", s.ID())
		}
	}
}

// listed is the ids of every session rt lists.
func listed(t *testing.T, rt *tack.Runtime) []string {
	t.Helper()
	l, err := rt.List(t.Context(), tack.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range l.GetSessions() {
		ids = append(ids, s.GetSession())
	}
	slices.Sort(ids)
	return ids
}

// TestCloseWhileASubagentWorks: a parent closed while its sub-agent runs
// a tool takes the sub-agent with it (no store), run and all.
func TestCloseWhileASubagentWorks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "slow.json"), []byte(`{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":30000}}]},{"text":"never"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(tack.WithScriptDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	s, err := rt.Spawn(tack.SessionConfig{ID: "p", Script: json.RawMessage(`{"turns":[{"tool_calls":[{"name":"subagent","args":{"task":"wait"}}]},{"text":"done"}]}`),
		Tools: []string{"subagent", "sleep"}, Subagents: &tack.SubagentConfig{Model: "script:slow.json"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(t.Context(), tack.SubscribeOptions{Types: []string{"sub_agent_event"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	for started := false; !started; {
		select {
		case ev := <-sub.C:
			started = ev.GetSubAgentEvent().GetEvent().GetToolExecutionStart() != nil
		case <-time.After(10 * time.Second):
			t.Fatal("the sub-agent's tool did not start")
		}
	}
	s.Close()
	if got := listed(t, rt); len(got) > 0 {
		t.Fatalf("listed %v after the parent's close", got)
	}
}
