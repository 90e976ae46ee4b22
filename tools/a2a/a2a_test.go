package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/server/a2aserver"
	"github.com/tack-run/tack/server/agentrun/agentruntest"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/a2a"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// remote serves the test agents over A2A: Tack is the remote agent.
func remote(t *testing.T) (*tack.Runtime, string) {
	t.Helper()
	rt, err := tack.New(append(agentruntest.Options(t), agentruntest.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	a, err := a2aserver.New(rt, a2aserver.Options{User: func(context.Context) string { return "local" }})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(a)
	t.Cleanup(hs.Close)
	return rt, hs.URL
}

// delegating is a Tack session whose script calls the remote agent's
// tool with a task, then says done.
func delegating(t *testing.T, url, agent string) *tack.Session {
	t.Helper()
	tl, err := a2a.New(agent, a2a.Agent{URL: url + "/a2a/" + agent}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(tack.WithTools(tl))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	script := `{"turns":[{"tool_calls":[{"name":"a2a:` + agent + `","args":{"task":"do it"}}]},{"text":"done"}],"when_exhausted":"repeat_last"}`
	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(script), Tools: []string{"a2a:" + agent}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call prompts s and returns the call's updates and its end; at sees
// each update first.
func call(t *testing.T, s *tack.Session, at func(partial string)) (updates []string, end *eventsv1.ToolExecutionEnd) {
	t.Helper()
	sub, err := s.Subscribe(t.Context(), tack.SubscribeOptions{Types: []string{"tool_execution_update", "tool_execution_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev := <-sub.C:
			switch p := ev.GetPayload().(type) {
			case *eventsv1.Event_ToolExecutionUpdate:
				updates = append(updates, p.ToolExecutionUpdate.GetPartial())
				if at != nil {
					at(p.ToolExecutionUpdate.GetPartial())
				}
			case *eventsv1.Event_ToolExecutionEnd:
				return updates, p.ToolExecutionEnd
			}
		case <-timeout:
			t.Fatal("no tool_execution_end in 60 s")
		}
	}
}

// TestDelegate: the remote agent's answer streams as updates and is the
// call's result.
func TestDelegate(t *testing.T) {
	_, url := remote(t)
	updates, end := call(t, delegating(t, url, "hello"), nil)
	if !end.GetOk() || end.GetResult() != agentruntest.HelloAnswer || end.GetName() != "a2a:hello" {
		t.Fatalf("end %+v", end)
	}
	// The answer streams: one update or more (a session relays the pieces
	// that come while it is busy in one).
	if got := strings.Join(updates, ""); got != agentruntest.HelloAnswer || len(updates) == 0 {
		t.Errorf("updates %q", updates)
	}
}

// TestAbortCancelsTheRemoteTask: aborting the delegating session cancels
// the call, which cancels the remote task: the remote run is aborted.
func TestAbortCancelsTheRemoteTask(t *testing.T) {
	rrt, url := remote(t)
	s := delegating(t, url, "slow")
	_, end := call(t, s, func(string) {
		go func() { _ = s.Abort(context.WithoutCancel(t.Context()), tack.AbortOptions{}) }()
	})
	if end.GetOk() || end.GetResult() != "interrupted: aborted by user" {
		t.Fatalf("end %+v", end)
	}
	waitRemote(t, rrt, func(msgs []string) bool {
		return len(msgs) == 2 && strings.HasSuffix(msgs[1], "\n\n[interrupted]")
	})
}

// TestRemoteCancelEndsTheCall: a remote run aborted on its own side
// ends the call with an error result saying so.
func TestRemoteCancelEndsTheCall(t *testing.T) {
	rrt, url := remote(t)
	s := delegating(t, url, "slow")
	_, end := call(t, s, func(string) {
		go func() {
			for _, id := range rrt.Sessions() {
				if rs, err := rrt.Session(id); err == nil {
					_ = rs.Abort(context.WithoutCancel(t.Context()), tack.AbortOptions{})
				}
			}
		}()
	})
	if end.GetOk() || !strings.HasPrefix(end.GetResult(), "the remote task ended canceled: ") {
		t.Fatalf("end %+v", end)
	}
}

// TestRemoteInputRequired: a remote approval cannot be answered by the
// call: the remote task is cancelled and the result says what it asked.
func TestRemoteInputRequired(t *testing.T) {
	rrt, url := remote(t)
	_, end := call(t, delegating(t, url, "guarded"), nil)
	want := `the remote agent asked for input this tool cannot give, so its task was cancelled: The agent wants to run the tool echo with {"text":"ok"}: approve or reject.`
	if end.GetOk() || end.GetResult() != want {
		t.Fatalf("end %+v\nwant %s", end, want)
	}
	waitRemote(t, rrt, func([]string) bool { return true }) // idle, nothing pending
}

// waitRemote waits until the remote runtime's one session is idle with
// a history (its contents) that done accepts.
func waitRemote(t *testing.T, rt *tack.Runtime, done func(msgs []string) bool) {
	t.Helper()
	eventually.Within(t, 5*time.Second, func() error {
		ids := rt.Sessions()
		if len(ids) != 1 {
			return fmt.Errorf("the remote runtime has sessions %q, want one", ids)
		}
		s, err := rt.Session(ids[0])
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.State(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for _, m := range agentruntest.Messages(t, rt, ids[0]) {
			msgs = append(msgs, m.Content)
		}
		if st.GetState() != "idle" || len(st.GetPendingApprovals()) > 0 || !done(msgs) {
			return fmt.Errorf("the remote session: %s, pending %v, history %q", st.GetState(), st.GetPendingApprovals(), msgs)
		}
		return nil
	})
}

// TestConfig: bad entries are errors naming the entry.
func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		agent a2a.Agent
		err   string
	}{
		{"a/b", a2a.Agent{URL: "http://h/a2a/x"}, `a2a_agents.a/b: the name must be 1 to 32 letters, digits, '_' or '-'`},
		{"r", a2a.Agent{URL: "ftp://h"}, `a2a_agents.r: "url" "ftp://h" is not an http:// or https:// URL`},
		{"r", a2a.Agent{URL: "http://h/a2a/x", TokenEnv: "tk_123 secret"}, `a2a_agents.r: "token_env" "tk_123 secret" is not an environment variable name (give the variable's name, not the token)`},
	} {
		if _, err := a2a.New(tc.name, tc.agent, nil); err == nil || err.Error() != tc.err {
			t.Errorf("%s %+v: %v, want %q", tc.name, tc.agent, err, tc.err)
		}
	}
	tl, err := a2a.New("r", a2a.Agent{URL: "http://h/a2a/x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := tl.Spec(); s.Name != "a2a:r" || s.Kind != tools.Killable || !tools.ValidName(s.Name) {
		t.Errorf("spec %+v", s)
	}
}
