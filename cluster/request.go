package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// ErrNoAnswer is Request's error when the session's member took the
// command but no answer came in time: the command may have been done or
// not (the member may have died with it).
var ErrNoAnswer = errors.New("no answer in time: the command may or may not have been done")

// ErrUnreached is Request's error when no member could be handed the
// command in time: it was not done.
var ErrUnreached = errors.New("no member took the command in time: it was not done")

// DefaultTimeout bounds a Request whose context has no deadline.
const DefaultTimeout = time.Minute

// Request sends msg to session id wherever it lives in the cluster — the
// member disthash names activates it there, restoring it from the store —
// and waits for its answer (an events/v1 Reply for session commands) until
// ctx is done (DefaultTimeout without a deadline). While no member takes
// it (the member list is changing, the session's member died and its
// grain is gone) it tries again: protoactor answers such a message with a
// dead letter, so it was not done. A command a member took but did not
// answer in time is ErrNoAnswer, never sent twice; so is one whose
// member's connection ended before the answer came (the member died), as
// soon as it ended.
func Request(ctx context.Context, c *Cluster, id string, msg any) (any, error) {
	return RequestFor(ctx, c, id, "", msg)
}

// RequestFor is Request of a command sent for user ("" for none): the
// session answers invalid_session when it is not user's, so that a
// command whose owner a front end checked before the id changed hands
// reaches nobody else's session.
func RequestFor(ctx context.Context, c *Cluster, id, user string, msg any) (any, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultTimeout)
	}
	for try := 0; ; try++ {
		if try > 0 {
			pause := min(time.Duration(try)*50*time.Millisecond, 500*time.Millisecond)
			if time.Now().Add(pause).After(deadline) {
				return nil, fmt.Errorf("session %s: %w", id, ErrUnreached)
			}
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, fmt.Errorf("session %s: %w (%v)", id, ErrUnreached, ctx.Err())
			}
		}
		pid := Grain(c, id)
		if pid == nil {
			continue
		}
		res, err := ask(c, pid, msg, user, time.Until(deadline))
		switch {
		case err == nil:
			return res, nil
		case errors.Is(err, actor.ErrDeadLetter) || errors.Is(err, remote.ErrDeadLetter):
			c.PidCache.RemoveByValue(id, remotev1.SessionKind, pid)
		case errors.Is(err, errEndpointGone):
			c.PidCache.RemoveByValue(id, remotev1.SessionKind, pid)
			return nil, fmt.Errorf("session %s at %s: %w (%w)", id, pid, ErrNoAnswer, err)
		case errors.Is(err, actor.ErrTimeout) || errors.Is(err, remote.ErrTimeout):
			return nil, fmt.Errorf("session %s at %s: %w", id, pid, ErrNoAnswer)
		default:
			return nil, fmt.Errorf("session %s at %s: %w", id, pid, err)
		}
	}
}

// Read is Request for a command that changes nothing (GetState,
// GetMessages): one whose member's connection ended before the answer
// came (the member died with it) is sent again, through the cluster, to
// where the session is now, until ctx is done.
func Read(ctx context.Context, c *Cluster, id string, msg any) (any, error) {
	for {
		res, err := Request(ctx, c, id, msg)
		if !errors.Is(err, errEndpointGone) {
			return res, err
		}
		t := time.NewTimer(readPause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return res, err
		}
	}
}

// readPause is Read's pause before it asks again.
const readPause = 100 * time.Millisecond

// errEndpointGone is ask's error when the connection to the member it
// asked ended before the answer came.
var errEndpointGone = errors.New("the connection to its member ended")

// ask sends msg to pid and waits for the answer for up to timeout, or
// until protoactor's remote tells that pid's endpoint terminated (its
// member died, or left the cluster's view): a message protoactor was
// still writing to it then is dropped without a dead letter, and its
// answer would never come. The future's outcome is piped to a process
// of ask's own, a channel: protoactor's future is not safe for a second
// message (it writes its result unguarded while Result reads it), so
// nothing but the answer is ever sent to it.
func ask(c *Cluster, pid *actor.PID, msg any, user string, timeout time.Duration) (any, error) {
	gone := make(chan struct{})
	var once sync.Once
	sub := c.ActorSystem.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*remote.EndpointTerminatedEvent); ok && t.Address == pid.Address {
			once.Do(func() { close(gone) })
		}
	})
	defer c.ActorSystem.EventStream.Unsubscribe(sub)
	answer := make(chan any, 1)
	registry := c.ActorSystem.ProcessRegistry
	self, _ := registry.Add(chanProcess(answer), "join-ask-"+registry.NextId())
	defer registry.Remove(self)
	f := actor.NewFuture(c.ActorSystem, timeout)
	env := &actor.MessageEnvelope{Message: msg, Sender: f.PID()}
	if user != "" {
		env.SetHeader(tack.UserHeader, user)
	}
	c.ActorSystem.Root.Send(pid, env)
	f.PipeTo(self)
	select {
	case res := <-answer:
		if err, ok := res.(error); ok {
			return nil, err // the future's ErrTimeout or ErrDeadLetter
		}
		return res, nil
	case <-gone:
		return nil, errEndpointGone
	}
}

// chanProcess is a protoactor process that puts the first message it is
// sent in its channel (of capacity one) and drops the rest.
type chanProcess chan any

func (p chanProcess) SendUserMessage(_ *actor.PID, message any) {
	select {
	case p <- message:
	default:
	}
}

func (p chanProcess) SendSystemMessage(pid *actor.PID, message any) { p.SendUserMessage(pid, message) }

func (p chanProcess) Stop(*actor.PID) {}

// Reply is Request for session commands: the Reply, or an error when
// none came or it carries one.
func Reply(ctx context.Context, c *Cluster, id string, msg any) (*eventsv1.Reply, error) {
	return replyFor(ctx, c, id, "", msg)
}

// replyFor is Reply of a command sent for user (RequestFor).
func replyFor(ctx context.Context, c *Cluster, id, user string, msg any) (*eventsv1.Reply, error) {
	res, err := RequestFor(ctx, c, id, user, msg)
	if err != nil {
		return nil, err
	}
	r, ok := res.(*eventsv1.Reply)
	if !ok {
		return nil, fmt.Errorf("session %s answered %T", id, res)
	}
	if r.Error != nil {
		return r, fmt.Errorf("%s: %s", r.Error.Code, r.Error.Message)
	}
	return r, nil
}

// NewSessionID names a session created without a name in a cluster:
// random, since members and clients share no counter.
func NewSessionID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "s-" + hex.EncodeToString(b)
}
