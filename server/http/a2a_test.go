package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/server/a2aserver"
	"github.com/tack-run/tack/server/a2aserver/a2aservertest"
	"github.com/tack-run/tack/server/agentrun/agentruntest"
	"github.com/tack-run/tack/store/memory"
)

// TestA2AOverHTTP runs the A2A checks at /a2a/{agent} as the local user.
func TestA2AOverHTTP(t *testing.T) {
	ts := startWith(t, nil, agentruntest.Options(t))
	a2aservertest.Run(t, a2aservertest.Server{URL: ts.url, Runtime: ts.rt})
	if r := ts.do("POST", "/a2a/nobody", "", "{}"); r.status != 404 || r.body != `{"error":{"code":"unknown_command","message":"no route POST /a2a/nobody"}}` {
		t.Errorf("an unknown agent: %d %s", r.status, r.body)
	}
	if got := ts.must("GET", "/.well-known/agent-card.json", "", "", 200); !json.Valid([]byte(got)) || !containsAll(got, `"name":"hello"`, ts.url+`/a2a/hello`) {
		t.Errorf("the default agent's card: %s", got)
	}
}

// containsAll reports whether s holds every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestA2AWithAuth runs them as alice behind --auth: the card names the
// bearer scheme, a call without a token is 401, and bob can neither get
// alice's task nor use her context.
func TestA2AWithAuth(t *testing.T) {
	ts := startWith(t, nil, agentruntest.Options(t), WithAuth(aliceAndBob(t)))
	if r := ts.do("GET", "/a2a/hello/.well-known/agent-card.json", "", ""); r.status != 401 {
		t.Fatalf("a card without a token: %d %s", r.status, r.body)
	}
	alice := a2aservertest.Server{URL: ts.url, Token: "tk_alice", Runtime: ts.rt}
	a2aservertest.Run(t, alice)
	o := a2aservertest.Stream(t, alice.Client(t, "hello"), a2aservertest.Message("", a2a.NewTextPart("hi")), nil)
	bob := a2aservertest.Server{URL: ts.url, Token: "tk_bob", Runtime: ts.rt}.Client(t, "hello")
	if task, err := bob.GetTask(t.Context(), &a2a.GetTaskRequest{ID: o.Task}); err == nil {
		t.Errorf("bob got alice's task: %+v", task)
	}
	req := a2aservertest.Message("", a2a.NewTextPart("mine now"))
	req.Message.ContextID = o.Context
	if res, err := bob.SendMessage(t.Context(), req); err == nil {
		if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateFailed {
			t.Errorf("bob used alice's context: %+v", res)
		}
	}
}

// TestA2ASubscribeOnlyToOwnTasks: bob, who knows the id of alice's
// running task, cannot subscribe to it: he is told the task does not
// exist, as GetTask tells him, and sees none of its events. a2a-go
// attached any caller to a running execution by the task's id alone, and
// bob read alice's answer as it streamed.
func TestA2ASubscribeOnlyToOwnTasks(t *testing.T) {
	ts := startWith(t, nil, agentruntest.Options(t), WithAuth(aliceAndBob(t)))
	alice := a2aservertest.Server{URL: ts.url, Token: "tk_alice", Runtime: ts.rt}.Client(t, "slow")
	bob := a2aservertest.Server{URL: ts.url, Token: "tk_bob", Runtime: ts.rt}.Client(t, "slow")
	ctx, drop := context.WithCancel(t.Context())
	var task a2a.TaskID
	for ev, err := range alice.SendStreamingMessage(ctx, a2aservertest.Message("", a2a.NewTextPart("alice's question"))) {
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			task = a.TaskID
			break
		}
	}
	drop() // the run goes on: alice may subscribe again
	defer func() { _, _ = alice.CancelTask(context.WithoutCancel(t.Context()), &a2a.CancelTaskRequest{ID: task}) }()
	got := 0
	for _, err := range bob.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: task}) {
		if err != nil {
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("bob's subscription to alice's task: %v, want task not found", err)
			}
			break
		}
		if got++; got == 3 {
			break
		}
	}
	if got > 0 {
		t.Errorf("bob subscribed to alice's running task and saw %d of its events", got)
	}
}

// TestA2ARestart: contexts (sessions in the store) and finished tasks
// (the task directory) survive a restart of the server.
func TestA2ARestart(t *testing.T) {
	st, tasks, opts := memory.New(), t.TempDir(), agentruntest.Options(t)
	serve := func() (*tack.Runtime, *httptest.Server) {
		rt, err := tack.New(append(opts, append(agentruntest.Plugins(), tack.WithStore(st), tack.WithNode("test"))...)...)
		if err != nil {
			t.Fatal(err)
		}
		a, err := a2aserver.New(rt, a2aserver.Options{TaskDir: tasks, User: User})
		if err != nil {
			t.Fatal(err)
		}
		return rt, httptest.NewServer(New(rt, WithA2A(a)))
	}
	rt, hs := serve()
	first := a2aservertest.Server{URL: hs.URL, Runtime: rt}
	o := a2aservertest.Stream(t, first.Client(t, "hello"), a2aservertest.Message("", a2a.NewTextPart("hi")), nil)
	hs.Close()
	rt.Close()

	rt, hs = serve()
	defer rt.Close()
	defer hs.Close()
	again := a2aservertest.Server{URL: hs.URL, Runtime: rt}
	c := again.Client(t, "hello")
	task, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: o.Task})
	if err != nil || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("the task after a restart: %+v %v", task, err)
	}
	req := a2aservertest.Message("", a2a.NewTextPart("again"))
	req.Message.ContextID = o.Context
	if next := a2aservertest.Stream(t, c, req, nil); next.States[len(next.States)-1] != a2a.TaskStateCompleted {
		t.Fatalf("the context after a restart: %v", next.States)
	}
	if n := len(agentruntest.Messages(t, rt, o.Context)); n != 4 {
		t.Errorf("the context's session holds %d messages, want 4", n)
	}
}

// TestA2ASubagentContextTellsNothing: a sub-agent's id as a contextId is
// no context of the caller's, whether another user's session has that
// sub-agent or nobody does: bob's messages naming alice's p/sub-1 and the
// p/sub-2 nobody has get the same answer. Before, the second was an
// invalid id's error (a create that no client may make), and bob learned
// how many sub-agents alice's session had made.
func TestA2ASubagentContextTellsNothing(t *testing.T) {
	ts := startWith(t, memory.New(), append(agentruntest.Options(t), tack.WithPassivateAfter(10*time.Minute)), WithAuth(aliceAndBob(t)))
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"p","tools":["subagent"],"subagents":{"model":"script:hello.json"},`+
		`"script":{"turns":[{"tool_calls":[{"name":"subagent","args":{"task":"Say hi."}}]},{"text":"done"}]}}`, 201)
	ts.must("POST", "/v1/sessions/p/prompt", aliceToken, `{"text":"go"}`, 200)
	eventually.Within(t, 5*time.Second, func() error {
		if r := ts.do("GET", "/v1/sessions/p%2Fsub-1", aliceToken, ""); r.status != 200 {
			return fmt.Errorf("alice's p/sub-1: %d", r.status)
		}
		return nil
	})
	bob := a2aservertest.Server{URL: ts.url, Token: bobToken, Runtime: ts.rt}.Client(t, "hello")
	answers := map[string]string{}
	for _, id := range []string{"p/sub-1", "p/sub-2"} {
		req := a2aservertest.Message("", a2a.NewTextPart("hi"))
		req.Message.ContextID = id
		_, err := bob.SendMessage(t.Context(), req)
		if err == nil {
			t.Fatalf("bob's message to context %s was taken", id)
		}
		answers[id] = strings.ReplaceAll(err.Error(), id, "ID")
	}
	if answers["p/sub-1"] != answers["p/sub-2"] {
		t.Fatalf("bob told alice's sub-agent from none:\n p/sub-1: %s\n p/sub-2: %s", answers["p/sub-1"], answers["p/sub-2"])
	}
}
