// Package a2aservertest checks Tack's A2A server (package a2aserver)
// with the official a2a-go client, over whatever serves it.
package a2aservertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/server/agentrun/agentruntest"
	a2atool "github.com/tack-run/tack/tools/a2a"
)

// Server is the server under test, serving the agents of package
// agentruntest.
type Server struct {
	// URL is the server's base URL.
	URL string
	// Token, when set, is sent as a bearer token.
	Token string
	// Runtime is the runtime behind the server.
	Runtime *tack.Runtime
}

// Run runs every check on srv.
func Run(t *testing.T, srv Server) {
	t.Run("card", srv.card)
	t.Run("stream", srv.stream)
	t.Run("send", srv.send)
	t.Run("approve", srv.approve)
	t.Run("question", srv.question)
	t.Run("cancel", srv.cancel)
	t.Run("cancel_waiting", srv.cancelWaiting)
	t.Run("resubscribe", srv.resubscribe)
}

// Card fetches agent's card.
func (srv Server) Card(t *testing.T, agent string) *a2a.AgentCard {
	t.Helper()
	var opts []agentcard.ResolveOption
	if srv.Token != "" {
		opts = append(opts, agentcard.WithRequestHeader("Authorization", "Bearer "+srv.Token))
	}
	card, err := agentcard.NewResolver(nil).Resolve(t.Context(), srv.URL+"/a2a/"+agent, opts...)
	if err != nil {
		t.Fatalf("the card of %s: %v", agent, err)
	}
	return card
}

// Client is a client of agent.
func (srv Server) Client(t *testing.T, agent string) *a2aclient.Client {
	t.Helper()
	var opts []a2aclient.FactoryOption
	if srv.Token != "" {
		opts = append(opts, a2aclient.WithCallInterceptors(a2atool.Bearer(srv.Token)))
	}
	c, err := a2aclient.NewFromCard(t.Context(), srv.Card(t, agent), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func (srv Server) card(t *testing.T) {
	card := srv.Card(t, "hello")
	if card.Name != "hello" || card.Description != "Says hello." || !card.Capabilities.Streaming ||
		len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].URL != srv.URL+"/a2a/hello" ||
		card.SupportedInterfaces[0].ProtocolBinding != a2a.TransportProtocolJSONRPC {
		t.Errorf("card %+v", card)
	}
	if (srv.Token != "") != (len(card.SecuritySchemes) == 1) {
		t.Errorf("security schemes %v with token %q", card.SecuritySchemes, srv.Token)
	}
}

// Message is a user message with parts, of a task when task is set.
func Message(task a2a.TaskID, parts ...*a2a.Part) *a2a.SendMessageRequest {
	m := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	m.TaskID = task
	return &a2a.SendMessageRequest{Message: m}
}

// Outcome is what a stream told: the task's id and context, its states
// in order, the artifact text and the last status's message.
type Outcome struct {
	Task    a2a.TaskID
	Context string
	States  []a2a.TaskState
	Text    string
	Status  *a2a.Message
}

// Stream sends req streaming and reads the stream to its end; at calls
// each event first (it may be nil).
func Stream(t *testing.T, c *a2aclient.Client, req *a2a.SendMessageRequest, at func(a2a.Event)) Outcome {
	t.Helper()
	var o Outcome
	for ev, err := range c.SendStreamingMessage(t.Context(), req) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if at != nil {
			at(ev)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			o.Task, o.Context = e.ID, e.ContextID
			o.States = append(o.States, e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			o.Task, o.Context = e.TaskID, e.ContextID
			o.States = append(o.States, e.Status.State)
			o.Status = e.Status.Message
		case *a2a.TaskArtifactUpdateEvent:
			o.Text += partsText(e.Artifact.Parts)
		}
	}
	return o
}

// partsText is the text of parts.
func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if s, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(s))
		}
	}
	return b.String()
}

// data is the first data part of m.
func data(m *a2a.Message) map[string]any {
	if m == nil {
		return nil
	}
	for _, p := range m.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			v, _ := d.Value.(map[string]any)
			return v
		}
	}
	return nil
}

func states(s ...a2a.TaskState) []a2a.TaskState { return s }

// stream: submitted, working, the answer as artifact updates, completed
// with the answer; getting the task returns it with its history; a
// second message in the context continues its session.
func (srv Server) stream(t *testing.T) {
	c := srv.Client(t, "hello")
	o := Stream(t, c, Message("", a2a.NewTextPart("hi")), nil)
	if want := states(a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted); !slices.Equal(o.States, want) || o.Text != agentruntest.HelloAnswer {
		t.Fatalf("states %v text %q", o.States, o.Text)
	}
	if got := partsText(o.Status.Parts); got != agentruntest.HelloAnswer {
		t.Errorf("the completed status says %q", got)
	}
	task, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: o.Task})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateCompleted || len(task.History) == 0 || partsText(task.History[0].Parts) != "hi" ||
		len(task.Artifacts) != 1 || partsText(task.Artifacts[0].Parts) != agentruntest.HelloAnswer {
		t.Errorf("task %+v", task)
	}
	req := Message("", a2a.NewTextPart("again"))
	req.Message.ContextID = o.Context
	again := Stream(t, c, req, nil)
	if again.Context != o.Context || again.Task == o.Task {
		t.Errorf("the second task: context %q task %q", again.Context, again.Task)
	}
	if n := len(agentruntest.Messages(t, srv.Runtime, o.Context)); n != 4 {
		t.Errorf("the context's session holds %d messages, want 4", n)
	}
}

// send: a plain message answers with the finished task.
func (srv Server) send(t *testing.T) {
	res, err := srv.Client(t, "hello").SendMessage(t.Context(), Message("", a2a.NewTextPart("hi")))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || partsText(task.Artifacts[0].Parts) != agentruntest.HelloAnswer {
		t.Fatalf("result %+v", res)
	}
}

// approve: the held call makes the task input-required with the
// approval in a data part; a message with the decision resumes it.
func (srv Server) approve(t *testing.T) {
	c := srv.Client(t, "guarded")
	o := Stream(t, c, Message("", a2a.NewTextPart("echo it")), nil)
	d := data(o.Status)
	if want := states(a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired); !slices.Equal(o.States, want) ||
		d["approval_id"] != "ap-1" || d["tool"] != "echo" {
		t.Fatalf("states %v status %+v", o.States, o.Status)
	}
	then := Stream(t, c, Message(o.Task, a2a.NewDataPart(map[string]any{"approval_id": "ap-1", "decision": "approve"})), nil)
	if want := states(a2a.TaskStateWorking, a2a.TaskStateCompleted); !slices.Equal(then.States, want) || then.Text != agentruntest.GuardedAnswer {
		t.Fatalf("after approving: states %v text %q", then.States, then.Text)
	}
	if got := agentruntest.ToolResult(t, srv.Runtime, o.Context); got != "ok" {
		t.Errorf("tool result %q", got)
	}
}

// question: an ask_user question makes the task input-required; plain
// text answers it.
func (srv Server) question(t *testing.T) {
	c := srv.Client(t, "curious")
	o := Stream(t, c, Message("", a2a.NewTextPart("ask me")), nil)
	d := data(o.Status)
	if o.States[len(o.States)-1] != a2a.TaskStateInputRequired || d["question"] != agentruntest.CuriousQuestion {
		t.Fatalf("states %v status %+v", o.States, o.Status)
	}
	then := Stream(t, c, Message(o.Task, a2a.NewTextPart("blue")), nil)
	if then.States[len(then.States)-1] != a2a.TaskStateCompleted || then.Text != agentruntest.CuriousAnswer {
		t.Fatalf("after answering: states %v text %q", then.States, then.Text)
	}
	if got := agentruntest.ToolResult(t, srv.Runtime, o.Context); got != "blue" {
		t.Errorf("tool result %q", got)
	}
}

// cancel: cancelling the task mid-stream ends the stream with canceled
// within 100 ms, the cancel answers the canceled task, and the run is
// aborted.
func (srv Server) cancel(t *testing.T) {
	c := srv.Client(t, "slow")
	var cancelled time.Time
	var seen time.Duration
	answered := make(chan error, 1)
	o := Stream(t, c, Message("", a2a.NewTextPart("go on")), func(ev a2a.Event) {
		switch e := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			if cancelled.IsZero() {
				cancelled = time.Now()
				go func() {
					task, err := c.CancelTask(context.WithoutCancel(t.Context()), &a2a.CancelTaskRequest{ID: e.TaskID})
					if err == nil && task.Status.State != a2a.TaskStateCanceled {
						err = fmt.Errorf("the cancel answered a task %s", task.Status.State)
					}
					answered <- err
				}()
			}
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State == a2a.TaskStateCanceled {
				seen = time.Since(cancelled)
			}
		}
	})
	if o.States[len(o.States)-1] != a2a.TaskStateCanceled {
		t.Fatalf("states %v", o.States)
	}
	if seen > 100*time.Millisecond {
		t.Errorf("canceled %v after the cancel", seen)
	}
	if err := <-answered; err != nil {
		t.Errorf("CancelTask: %v", err)
	}
	s, err := srv.Runtime.Session(o.Context)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := s.State(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if st.GetState() == "idle" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session is %s 5 s after the cancel", st.GetState())
		}
		time.Sleep(5 * time.Millisecond)
	}
	task, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: o.Task})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Errorf("task %+v %v", task, err)
	}
}

// cancelWaiting: cancelling a task that waits for an approval (no run
// is streaming it) answers it canceled, and the task stays canceled.
func (srv Server) cancelWaiting(t *testing.T) {
	c := srv.Client(t, "guarded")
	o := Stream(t, c, Message("", a2a.NewTextPart("echo it")), nil)
	if o.States[len(o.States)-1] != a2a.TaskStateInputRequired {
		t.Fatalf("states %v", o.States)
	}
	task, err := c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: o.Task})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask: %+v %v", task, err)
	}
	if task, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: o.Task}); err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Errorf("task %+v %v", task, err)
	}
}

// resubscribe: a client that drops its stream does not stop the run;
// subscribing to the task follows it again, to the end a cancel gives.
func (srv Server) resubscribe(t *testing.T) {
	c := srv.Client(t, "slow")
	ctx, drop := context.WithCancel(t.Context())
	var task a2a.TaskID
	for ev, err := range c.SendStreamingMessage(ctx, Message("", a2a.NewTextPart("go on"))) {
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			task = a.TaskID
			break
		}
	}
	drop()
	updates := 0
	var last a2a.TaskState
	for ev, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: task}) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			if updates++; updates == 3 {
				go func() { _, _ = c.CancelTask(context.WithoutCancel(t.Context()), &a2a.CancelTaskRequest{ID: task}) }()
			}
		case *a2a.TaskStatusUpdateEvent:
			last = e.Status.State
		}
	}
	if updates < 3 || last != a2a.TaskStateCanceled {
		t.Fatalf("resubscribed: %d artifact updates, last state %q", updates, last)
	}
}
