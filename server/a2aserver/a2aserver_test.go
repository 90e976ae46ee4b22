package a2aserver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.uber.org/goleak"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/server/a2aserver"
	"github.com/tack-run/tack/server/a2aserver/a2aservertest"
	"github.com/tack-run/tack/server/agentrun/agentruntest"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestA2A runs the checks against the handler alone, every caller
// "local".
func TestA2A(t *testing.T) {
	rt, err := tack.New(append(agentruntest.Options(t), agentruntest.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	a, err := a2aserver.New(rt, a2aserver.Options{User: func(context.Context) string { return "local" }})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(a)
	defer hs.Close()
	a2aservertest.Run(t, a2aservertest.Server{URL: hs.URL, Runtime: rt})
}

// userKey carries the caller the test handler read from the request.
type userKey struct{}

// serve serves a over HTTP to callers named by their bearer token
// ("local" without one), as a2aservertest's clients send it.
func serve(t *testing.T, rt *tack.Runtime, opt a2aserver.Options) a2aservertest.Server {
	t.Helper()
	opt.User = func(ctx context.Context) string {
		if u, _ := ctx.Value(userKey{}).(string); u != "" {
			return u
		}
		return "local"
	}
	a, err := a2aserver.New(rt, opt)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		a.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	}))
	t.Cleanup(hs.Close)
	return a2aservertest.Server{URL: hs.URL, Runtime: rt}
}

// inContext is a message of context id.
func inContext(id, text string) *a2a.SendMessageRequest {
	req := a2aservertest.Message("", a2a.NewTextPart(text))
	req.Message.ContextID = id
	return req
}

// TestDeleteForgetsTasks: deleting a session (Delete, or the retention
// sweep) removes the tasks of its context from every agent's store:
// getting them is task-not-found, listing the context finds none, and
// their text is gone from the task files; another context's tasks stay,
// also across a restart. A session deleted while no server listened (by
// tack rpc on the same store) has its tasks forgotten when a server reads
// them back.
func TestDeleteForgetsTasks(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	mem := memory.New(store.WithClock(clock))
	rt, err := tack.New(append(agentruntest.Options(t), append(agentruntest.Plugins(), tack.WithStore(mem), tack.WithClock(clock))...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	dir := t.TempDir()
	srv := serve(t, rt, a2aserver.Options{TaskDir: dir})
	c := srv.Client(t, "hello")
	send := func(context, text string) a2a.TaskID {
		o := a2aservertest.Stream(t, c, inContext(context, text), nil)
		if o.States[len(o.States)-1] != a2a.TaskStateCompleted {
			t.Fatalf("%s: states %v", context, o.States)
		}
		return o.Task
	}
	deleted, swept := send("gone", "SECRET-ONE"), send("swept", "SECRET-TWO")
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	kept := send("kept", "KEPT-TEXT") // changed since: not swept
	offline := send("offline", "OFFLINE-TEXT")
	if err := rt.Delete(t.Context(), "gone"); err != nil {
		t.Fatal(err)
	}
	if ids, err := rt.Sweep(t.Context(), time.Minute); err != nil || !slices.Equal(ids, []string{"swept"}) {
		t.Fatalf("Sweep = %v, %v", ids, err)
	}
	check := func(c *a2aclient.Client, gone ...a2a.TaskID) {
		t.Helper()
		for _, task := range append([]a2a.TaskID{deleted, swept}, gone...) {
			if got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("GetTask of a deleted session's task: %+v, %v", got, err)
			}
		}
		for _, ctx := range []string{"gone", "swept"} {
			if list, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{ContextID: ctx}); err != nil || len(list.Tasks) != 0 {
				t.Errorf("ListTasks of %s: %+v, %v", ctx, list, err)
			}
		}
		if got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: kept}); err != nil || got.ContextID != "kept" {
			t.Errorf("GetTask of another context's task: %+v, %v", got, err)
		}
	}
	check(c)
	texts := func() string {
		var texts strings.Builder
		files, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			texts.Write(b)
		}
		return texts.String()
	}
	if s := texts(); strings.Contains(s, "SECRET") || !strings.Contains(s, "KEPT-TEXT") || !strings.Contains(s, "OFFLINE-TEXT") {
		t.Errorf("the task files hold %s", s)
	}
	// offline is deleted from the store while no server listens.
	if s, err := rt.Session("offline"); err == nil {
		s.Close()
	}
	if err := mem.Delete(t.Context(), "offline"); err != nil {
		t.Fatal(err)
	}
	// Restarted, the server reads the tasks back: the kept one alone.
	check(serve(t, rt, a2aserver.Options{TaskDir: dir}).Client(t, "hello"), offline)
	if s := texts(); strings.Contains(s, "OFFLINE-TEXT") || !strings.Contains(s, "KEPT-TEXT") {
		t.Errorf("after the restart the task files hold %s", s)
	}
}

// TestDeleteRacingTheFirstMessage: a context deleted as its first
// message makes its task (the deletion forgets the context's tasks before
// that one is stored) keeps no task and no text once the execution is
// over. 18 of 60 such contexts kept theirs before.
func TestDeleteRacingTheFirstMessage(t *testing.T) {
	rt, err := tack.New(append(agentruntest.Options(t), agentruntest.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	dir := t.TempDir()
	c := serve(t, rt, a2aserver.Options{TaskDir: dir}).Client(t, "hello")
	for i := range 60 {
		id := fmt.Sprintf("race-%d", i)
		deleted := make(chan bool)
		go func() {
			for range 20000 {
				if _, err := rt.User(t.Context(), id); err == nil {
					deleted <- rt.Delete(t.Context(), id) == nil
					return
				}
				runtime.Gosched()
			}
			deleted <- false
		}()
		_, _ = c.SendMessage(t.Context(), inContext(id, "SECRET-"+id))
		if !<-deleted {
			continue
		}
		eventually.Within(t, 5*time.Second, func() error {
			if _, err := rt.User(t.Context(), id); err == nil {
				return nil // made again after the deletion: its task is its own
			}
			if list, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{ContextID: id}); err != nil || len(list.Tasks) > 0 {
				return fmt.Errorf("%s deleted, yet ListTasks = %+v, %v", id, list, err)
			}
			return nil
		})
	}
	var texts strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		texts.Write(b)
	}
	for i := range 60 {
		id := fmt.Sprintf("race-%d", i)
		if _, err := rt.User(t.Context(), id); err != nil && strings.Contains(texts.String(), `"SECRET-`+id+`"`) {
			t.Errorf("the task files hold the text of %s, deleted", id)
		}
	}
}

// TestDeleteEndsStream: a task streaming when its session is deleted
// ends its stream, and is gone.
func TestDeleteEndsStream(t *testing.T) {
	rt, err := tack.New(append(agentruntest.Options(t), agentruntest.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	c := serve(t, rt, a2aserver.Options{TaskDir: t.TempDir()}).Client(t, "slow")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var task a2a.TaskID
	for ev, err := range c.SendStreamingMessage(ctx, inContext("streaming", "go on")) {
		if err != nil {
			break
		}
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && task == "" {
			task = a.TaskID
			if err := rt.Delete(t.Context(), "streaming"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ctx.Err() != nil || task == "" {
		t.Fatalf("the stream did not end with the session (task %q): %v", task, ctx.Err())
	}
	if got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTask after the deletion: %+v, %v", got, err)
	}
}

// TestContextOfAnotherAgent: a context is a session of the agent that
// serves it: alice's session of hello, or her session of no agent, is
// refused at slow (or hello) exactly as bob is refused alice's session,
// and no model answers.
func TestContextOfAnotherAgent(t *testing.T) {
	rt, err := tack.New(append(agentruntest.Options(t), agentruntest.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	srv := serve(t, rt, a2aserver.Options{})
	alice, bob := srv, srv
	alice.Token, bob.Token = "alice", "bob"
	if o := a2aservertest.Stream(t, alice.Client(t, "hello"), inContext("mine", "hi"), nil); o.Text != agentruntest.HelloAnswer {
		t.Fatalf("alice's first message: %+v", o)
	}
	if _, err := rt.Spawn(tack.SessionConfig{ID: "plain", User: "alice", Model: "script:hello.json"}); err != nil {
		t.Fatal(err)
	}
	refused := func(srv a2aservertest.Server, agent, context string) string {
		t.Helper()
		res, err := srv.Client(t, agent).SendMessage(t.Context(), inContext(context, "hi"))
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("%s's message to %s in %s: %+v, %v; want task not found", srv.Token, agent, context, res, err)
		}
		return err.Error()
	}
	bobs := refused(bob, "hello", "mine")
	if got := refused(alice, "slow", "mine"); got != bobs {
		t.Errorf("another agent's session: %q; another user's: %q", got, bobs)
	}
	if got, want := refused(alice, "hello", "plain"), strings.ReplaceAll(bobs, `"mine"`, `"plain"`); got != want {
		t.Errorf("a session of no agent: %q, want %q", got, want)
	}
	for _, id := range []string{"mine", "plain"} {
		if n := len(agentruntest.Messages(t, rt, id)); n != map[string]int{"mine": 2, "plain": 0}[id] {
			t.Errorf("%s holds %d messages", id, n)
		}
	}
	if o := a2aservertest.Stream(t, alice.Client(t, "hello"), inContext("mine", "again"), nil); o.Text != agentruntest.HelloAnswer {
		t.Errorf("alice's hello session refused at hello: %+v", o)
	}
}
