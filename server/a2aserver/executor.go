package a2aserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/eventqueue"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/server/agentrun"
)

// executor runs one agent's tasks: a task's context is a session of the
// agent, the task one run of it.
type executor struct {
	rt    *tack.Runtime
	agent string
	// abortTimeout bounds the wait for a session to take an abort.
	abortTimeout time.Duration
	// forget forgets the tasks of a context whose session is gone
	// (Server.forget).
	forget func(id string)
}

// Cleanup runs once an execution's events are all stored. A session
// deleted while its task was being made (the deletion forgot the
// context's tasks before this one was stored) has that task forgotten
// now; one deleted later had it forgotten then.
func (e *executor) Cleanup(ctx context.Context, ec *a2asrv.ExecutorContext, _ a2a.SendMessageResult, _ error) {
	if _, err := e.rt.User(context.WithoutCancel(ctx), ec.ContextID); tack.Code(err) == events.CodeInvalidSession {
		e.forget(ec.ContextID)
	}
}

// user is the caller of an execution.
func user(ec *a2asrv.ExecutorContext) string {
	if ec.User == nil {
		return ""
	}
	return ec.User.Name
}

// session is the context's session, made of the agent at the context's
// first message; another user's session, and a session of another agent
// (or of none), are as if they did not exist.
func (e *executor) session(ctx context.Context, ec *a2asrv.ExecutorContext, create bool) (*tack.Session, error) {
	id, u := ec.ContextID, user(ec)
	s, err := agentrun.Continue(ctx, e.rt, id, u, e.agent)
	switch {
	case errors.Is(err, agentrun.ErrNotTheirs):
		return nil, noContext(id)
	case tack.Code(err) == events.CodeInvalidSession && strings.Contains(id, "/"):
		// A sub-agent's id, which no client makes: whether one exists
		// (another user's) or not, there is no such context for the caller.
		return nil, noContext(id)
	case tack.Code(err) == events.CodeInvalidSession && create:
		return e.rt.Spawn(tack.SessionConfig{ID: id, Agent: e.agent, User: u})
	}
	return s, err
}

// noContext is the error of a context that is not the caller's to use.
func noContext(id string) error {
	return a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("no context %q", id))
}

// Execute prompts the context's session with the message (or answers the
// approval or question its task waits for) and tells the run as it goes.
func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		s, err := e.session(ctx, ec, ec.StoredTask == nil)
		if err != nil {
			yield(nil, err)
			return
		}
		var f *agentrun.Follower
		if t := ec.StoredTask; t != nil && t.Status.State == a2a.TaskStateInputRequired {
			f, err = e.answer(ctx, s, t, ec.Message)
		} else {
			text := messageText(ec.Message)
			if text == "" {
				yield(nil, a2a.NewError(a2a.ErrInvalidParams, "the message has no text"))
				return
			}
			f, err = agentrun.Prompt(ctx, s, text)
		}
		if err != nil {
			yield(nil, err)
			return
		}
		defer f.Close()
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		var artifact a2a.ArtifactID
		for {
			step, err := f.Next(ctx)
			if err != nil {
				// The execution was cancelled (Cancel told it) or the
				// session went away.
				if ctx.Err() == nil {
					yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentMessage(ec, err.Error())), nil)
				}
				return
			}
			var ev a2a.Event
			switch step.Kind {
			case agentrun.Delta:
				if artifact == "" {
					a := a2a.NewArtifactEvent(ec, a2a.NewTextPart(step.Text))
					a.Artifact.Name = "answer"
					artifact = a.Artifact.ID
					ev = a
				} else {
					a := a2a.NewArtifactUpdateEvent(ec, artifact, a2a.NewTextPart(step.Text))
					a.Append = true
					ev = a
				}
			case agentrun.Approval:
				a := step.Approval
				var args any
				_ = json.Unmarshal(a.GetArgs().GetJson(), &args)
				msg := agentMessage(ec, fmt.Sprintf("The agent wants to run the tool %s with %s: approve or reject.", a.GetTool(), a.GetArgs().GetJson()))
				msg.Parts = append(msg.Parts, a2a.NewDataPart(map[string]any{"approval_id": a.GetApprovalId(), "tool": a.GetTool(),
					"call_id": a.GetCallId(), "args": args, "hint": a.GetHint()}))
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, msg), nil)
				return
			case agentrun.Question:
				q := step.Question
				msg := agentMessage(ec, "The agent asks: "+q.GetQuestion())
				msg.Parts = append(msg.Parts, a2a.NewDataPart(map[string]any{"ref": q.GetRef(), "question": q.GetQuestion(), "options": q.GetOptions()}))
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, msg), nil)
				return
			case agentrun.End:
				yield(e.end(ec, step), nil)
				return
			default:
				continue
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// end is the final status of a run that ended as step tells.
func (e *executor) end(ec *a2asrv.ExecutorContext, step agentrun.Step) *a2a.TaskStatusUpdateEvent {
	switch step.Reason {
	case "completed":
		return a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentMessage(ec, step.Text))
	case "aborted":
		return a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, agentMessage(ec, step.Text))
	}
	text := "the run ended: " + step.Reason
	if step.Error != "" {
		text += ": " + step.Error
	}
	return a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentMessage(ec, text))
}

// answer answers what task waits for with msg: a data part
// {"approval_id", "decision", "reason"} for an approval, {"ref",
// "response"} or plain text for a question. It follows the run from
// before the answer on.
func (e *executor) answer(ctx context.Context, s *tack.Session, task *a2a.Task, msg *a2a.Message) (*agentrun.Follower, error) {
	var data map[string]any
	for _, p := range msg.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			if m, ok := d.Value.(map[string]any); ok {
				data = m
			}
		}
	}
	str := func(k string) string { v, _ := data[k].(string); return v }
	waiting := waitingFor(task)
	f, err := agentrun.Follow(ctx, s)
	if err != nil {
		return nil, err
	}
	if pending, _ := waiting["approval_id"].(string); pending != "" {
		id := str("approval_id")
		if id == "" {
			id = pending
		}
		switch str("decision") {
		case "approve":
			err = s.Approve(ctx, id, false)
		case "reject":
			reason := str("reason")
			if reason == "" {
				reason = "rejected by the A2A client"
			}
			err = s.Reject(ctx, id, reason)
		default:
			err = a2a.NewError(a2a.ErrInvalidParams, `the task waits for an approval: answer with a data part {"approval_id", "decision": "approve" or "reject", "reason"}`)
		}
	} else {
		ref, response := str("ref"), str("response")
		if ref == "" {
			ref, _ = waiting["ref"].(string)
		}
		if response == "" {
			response = messageText(msg)
		}
		if response == "" {
			err = a2a.NewError(a2a.ErrInvalidParams, `the task waits for an answer: send it as text or as a data part {"ref", "response"}`)
		} else {
			err = s.Respond(ctx, ref, response)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// waitingFor is the data part of the input-required status of task:
// what it waits for.
func waitingFor(task *a2a.Task) map[string]any {
	if task.Status.Message == nil {
		return nil
	}
	for _, p := range task.Status.Message.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			if m, ok := d.Value.(map[string]any); ok {
				return m
			}
		}
	}
	return nil
}

// Cancel aborts the run of the task's context (kill_tools: killable).
// While an Execute streams the task (submitted or working), that Execute
// tells the canceled status as the run ends aborted, and the cancelation
// resolves to it: Cancel tells nothing, for a status of its own would race
// the Execute's end (whose queue a2a-go closes as it returns) and fail
// the cancelation with "queue is closed". A task that waits for a person
// (input-required) has no Execute running, so Cancel tells it canceled.
func (e *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		s, err := e.session(ctx, ec, false)
		if err != nil {
			yield(nil, err)
			return
		}
		actx, cancel := context.WithTimeout(ctx, e.abortTimeout)
		defer cancel()
		if err := s.Abort(actx, tack.AbortOptions{KillTools: events.KillKillable}); err != nil && !errors.Is(err, context.Canceled) {
			yield(nil, err)
			return
		}
		if t := ec.StoredTask; t != nil && (t.Status.State == a2a.TaskStateSubmitted || t.Status.State == a2a.TaskStateWorking) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// messageText is the text of a message's text parts.
func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(t))
		}
	}
	return b.String()
}

// agentMessage is an agent message of the task with text (nil when
// text is empty).
func agentMessage(ec *a2asrv.ExecutorContext, text string) *a2a.Message {
	if text == "" {
		return nil
	}
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
}

// settledCancels is a2a-go's request handler with a cancel that rides out
// a race of a2a-go's own: for a moment after a task's execution ended at
// input-required (the client has seen that status), a2a-go still counts
// the execution as running, hands the cancel to it, and fails the cancel
// with "queue is closed" or "not cancelable in input-required". Once the
// execution is gone, the same cancel goes through (Cancel tells the task
// canceled), so such a failure is tried again, a few times, briefly.
type settledCancels struct{ a2asrv.RequestHandler }

// cancelTries bounds the tries of a cancel that met the race.
const cancelTries = 5

func (h settledCancels) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	for try := 1; ; try++ {
		task, err := h.RequestHandler.CancelTask(ctx, req)
		if err == nil || try == cancelTries || !h.raced(ctx, req, err) {
			return task, err
		}
		t := time.NewTimer(time.Duration(try) * 10 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return task, err
		}
	}
}

// raced reports whether a cancel failed with err for the race, not because
// the task cannot be canceled: the execution's queue was closed under it,
// or it was refused as not cancelable while the task waits for a person.
func (h settledCancels) raced(ctx context.Context, req *a2a.CancelTaskRequest, err error) bool {
	if errors.Is(err, eventqueue.ErrQueueClosed) {
		return true
	}
	if !errors.Is(err, a2a.ErrTaskNotCancelable) {
		return false
	}
	t, gerr := h.GetTask(ctx, &a2a.GetTaskRequest{Tenant: req.Tenant, ID: req.ID})
	return gerr == nil && t.Status.State == a2a.TaskStateInputRequired
}
