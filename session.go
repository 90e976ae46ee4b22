package tack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tracing"
)

// Session is a handle on a live session. Its methods send commands to the
// session actor and wait for the answer; they are safe for concurrent use.
type Session struct {
	id string
	// pid is the session's actor, nil when the runtime passivates
	// sessions: a PID keeps its stopped actor in memory (protoactor caches
	// the process in it), so a handle kept across a passivation would keep
	// all the session was.
	pid *actor.PID
	rt  *Runtime
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// actor returns the session's actor, restored first if it was passivated.
func (l *local) actor(ctx context.Context, s *Session) (*actor.PID, error) {
	if s.pid != nil {
		return s.pid, nil
	}
	pid, err := l.rt.registry.Get(ctx, s.id)
	if err != nil {
		return nil, registryError(s.id, err)
	}
	return pid, nil
}

// Send sends any command (a protobuf command of events/v1) and returns the reply.
// With passivation on (WithPassivateAfter) it goes to the session by id,
// so a handle stays good across its session's passivations. A session that
// lives elsewhere (WithSessionsElsewhere) takes events/v1 commands only.
// A prompt sent with a ctx that carries a span (OpenTelemetry) and no
// traceparent of its own gets the span's: the run it starts is traced
// under it.
func (s *Session) Send(ctx context.Context, cmd any) (*eventsv1.Reply, error) {
	if err := s.rt.permitCommand(ctx, s.id, cmd); err != nil {
		return nil, err
	}
	if p, ok := cmd.(*eventsv1.Prompt); ok && p.Traceparent == "" {
		p.Traceparent = tracing.Traceparent(ctx)
	}
	return s.rt.reach.send(ctx, s, cmd)
}

// send goes by id through the registry when sessions may be passivated,
// else straight to the handle's actor.
//
// It posts cmd from its own frame, not a helper's, and waits in a plain
// channel receive (replies.Call): a goroutine that has just started, on
// Go's smallest stack, sends a command without growing its stack, which
// on a VM whose page faults are dear cost an abort up to 300 µs
// (TestAbortFitsAFreshStack).
func (l *local) send(ctx context.Context, s *Session, cmd any) (*eventsv1.Reply, error) {
	c := l.rt.replies.Open()
	env := envelope(ctx, cmd, c.Sender)
	if l.passivates {
		l.rt.registry.Deliver(s.id, env)
	} else {
		l.rt.system.Root.Send(s.pid, env)
	}
	if f, ok := ctx.Value(deliveredKey{}).(func()); ok {
		f()
	}
	res, err := c.Wait(l.rt.timeoutFor(ctx))
	if err != nil {
		return l.unread(ctx, s, cmd, err)
	}
	return l.rt.answer(res, nil)
}

// unread answers a command that got no answer (err). One that a
// sub-agent's stopped actor did not read goes to the sub-agent again, by
// id: the runtime unloads a sub-agent once its run is over (it stays
// stored), and a handle taken while it ran answered not_alive for good.
// The registry restores it. (Out of send's frame, which stays small.)
func (l *local) unread(ctx context.Context, s *Session, cmd any, err error) (*eventsv1.Reply, error) {
	if !errors.Is(err, actor.ErrDeadLetter) || s.pid == nil || !strings.Contains(s.id, "/") || l.rt.env.Store == nil {
		return l.rt.answer(nil, err)
	}
	c := l.rt.replies.Open()
	l.rt.registry.Deliver(s.id, envelope(ctx, cmd, c.Sender))
	return l.rt.answer(c.Wait(l.rt.timeoutFor(ctx)))
}

// envelope is cmd sent by sender, for the user ctx names (ForUser).
func envelope(ctx context.Context, cmd any, sender *actor.PID) *actor.MessageEnvelope {
	env := &actor.MessageEnvelope{Message: cmd, Sender: sender}
	if u := UserOf(ctx); u != "" {
		env.SetHeader(actors.UserHeader, u)
	}
	return env
}

// UserOf is the user ForUser gave ctx, "" for none: what Session.Send
// sends the command for, and what a front end (WithSessionsElsewhere)
// sends along for the session's process to check.
func UserOf(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

// UserHeader is the header of a message sent to a session actor for a
// user (ForUser): a session takes it only if it belongs to that user.
// Messages that cross processes (package cluster, server/remote) carry it.
const UserHeader = actors.UserHeader

// userKey is the context key of ForUser.
type userKey struct{}

// ForUser returns a context that has Session.Send (and the methods built
// on it) send its command for user: a session that does not belong to
// user answers invalid_session, as if it did not exist. A server checks
// a request's owner before it sends the command by id; this check, made
// by the session as it takes the command, holds even when the id changed
// hands in between (deleted by its owner and taken at once by another
// user). Runtime.Delete with such a context deletes the session only if
// it is user's. A front end (WithSessionsElsewhere) sends the user along
// (UserOf), and the session's process checks it.
func ForUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, userKey{}, user)
}

// deliveredKey is the context key of OnDelivered.
type deliveredKey struct{}

// OnDelivered returns a context that has Session.Send (and the methods
// built on it) call f once the command it sends is in its session's
// mailbox, before the answer is awaited: the session takes the commands
// in the order they reach it, so a server that runs one client's commands
// in order may send the next one then, instead of once this one is
// answered (an answer can wait for the store's write, and an abort sent
// meanwhile must not). A session in another process (WithSessionsElsewhere)
// never calls f.
func OnDelivered(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, deliveredKey{}, f)
}

// PromptOptions tune Prompt.
type PromptOptions struct {
	// IfBusy is what the prompt does while a run is in progress:
	// events.IfBusyQueue (also when empty), IfBusySteer, IfBusyReject (the
	// error busy), IfBusyInterrupt (abort the run, keep what it committed,
	// start this prompt) or IfBusyRollback (abort the run, take its
	// messages out of the working history, start this prompt). See
	// docs/control.md.
	IfBusy events.IfBusy
	// Images go with the prompt's text in its user message
	// (docs/sessions.md): data URLs of PNG, JPEG, GIF or WebP, or https
	// URLs.
	Images []*llm.Image
}

// Prompt sends user input: it starts a run when idle and is queued
// otherwise (queued reports which); at most one PromptOptions says what
// it does while the agent works.
func (s *Session) Prompt(ctx context.Context, text string, opt ...PromptOptions) (queued bool, err error) {
	cmd := &eventsv1.Prompt{Text: text}
	if len(opt) > 0 {
		cmd.IfBusy, cmd.Images = string(opt[0].IfBusy), opt[0].Images
	}
	r, err := s.Send(ctx, cmd)
	return r.GetPrompt().GetQueued(), err
}

// SteerOptions tune Steer.
type SteerOptions struct {
	// KeepTools leaves the running killable tools alone (interrupt_tools false).
	KeepTools bool
	// Images go with the steering message, as PromptOptions.Images.
	Images []*llm.Image
}

// Steer redirects the agent: merged before the next model request, and
// cancelling the killable tools of a running batch. It returns the
// steering reference.
func (s *Session) Steer(ctx context.Context, text string, opt SteerOptions) (ref string, err error) {
	interrupt := !opt.KeepTools
	r, err := s.Send(ctx, &eventsv1.Steer{Text: text, InterruptTools: &interrupt, Images: opt.Images})
	return r.GetSteer().GetRef(), err
}

// AbortOptions tune Abort.
type AbortOptions struct {
	// KillTools is events.KillKillable (the default when empty), KillAll
	// or KillNone.
	KillTools events.KillTools
	// ClearQueue drops queued prompts and steering.
	ClearQueue bool
	// At is where the run stops: events.AtNow (also when empty),
	// AtAfterResponse (the response in flight is committed, its tool
	// calls do not run) or AtAfterTools (the running tool batch
	// finishes). See docs/control.md.
	At events.At
	// Timeout, when positive, makes an abort that waits for At act now
	// after it (whole milliseconds).
	Timeout time.Duration
	// Rollback takes the run's messages out of the working history once
	// it has stopped (they stay in AllMessages, marked RolledBack).
	Rollback bool
}

// Abort stops the run: agent_abort reaches subscribers at once, agent_end
// once the run has stopped.
func (s *Session) Abort(ctx context.Context, opt AbortOptions) error {
	_, err := s.Send(ctx, &eventsv1.Abort{KillTools: string(opt.KillTools), ClearQueue: opt.ClearQueue,
		At: string(opt.At), TimeoutMs: opt.Timeout.Milliseconds(), Rollback: opt.Rollback})
	return err
}

// SwitchModel makes the next model request use another model; with a
// policy (WithPolicy), one the session's owner is granted.
func (s *Session) SwitchModel(ctx context.Context, name string) error {
	return s.rt.reach.switchModel(ctx, s, name)
}

// switchModel resolves the name here and hands the session the model.
func (*local) switchModel(ctx context.Context, s *Session, name string) error {
	if err := s.rt.permitCommand(ctx, s.id, &eventsv1.SwitchModel{Model: name}); err != nil {
		return err
	}
	m, err := s.rt.resolve(name, nil)
	if err != nil {
		return err
	}
	_, err = s.Send(ctx, &actors.SwitchModel{Model: m, StaysLoaded: s.rt.env.StaysLoaded(m, name, nil)})
	return err
}

// Approve resolves a pending approval; always records a rule for the tool.
func (s *Session) Approve(ctx context.Context, approvalID string, always bool) error {
	_, err := s.Send(ctx, &eventsv1.Approve{ApprovalId: approvalID, Always: always})
	return err
}

// Reject resolves a pending approval as rejected.
func (s *Session) Reject(ctx context.Context, approvalID, reason string) error {
	_, err := s.Send(ctx, &eventsv1.Reject{ApprovalId: approvalID, Reason: reason})
	return err
}

// Respond answers a pending ask_user question.
func (s *Session) Respond(ctx context.Context, ref, response string) error {
	_, err := s.Send(ctx, &eventsv1.Respond{Ref: ref, Response: response})
	return err
}

// State returns what get_state answers.
func (s *Session) State(ctx context.Context) (*eventsv1.SessionState, error) {
	r, err := s.Send(ctx, &eventsv1.GetState{})
	return r.GetState(), err
}

// Messages returns the committed history.
func (s *Session) Messages(ctx context.Context) ([]*llm.Message, error) {
	r, err := s.Send(ctx, &eventsv1.GetMessages{})
	return r.GetMessages().GetMessages(), err
}

// AllMessages returns every message the session ever committed, in
// order: those compaction replaced, marked Compacted, then the working
// history (get_messages with all).
func (s *Session) AllMessages(ctx context.Context) ([]*llm.Message, error) {
	r, err := s.Send(ctx, &eventsv1.GetMessages{All: true})
	return r.GetMessages().GetMessages(), err
}

// Compact replaces the older part of the history with a summary: at once
// when no run is in progress, else at the run's next turn gap. It returns
// at once; compact_start and compact_end tell the rest.
func (s *Session) Compact(ctx context.Context) error {
	_, err := s.Send(ctx, &eventsv1.Compact{})
	return err
}

// AttachTools adds the named tools (of the runtime's catalog, or brought
// by the session's plugins) to the session's tool set, from its next
// model request on, in any state; tools_updated tells which were added.
// An unknown name is unknown_tool, one the session's owner is not granted
// (WithPolicy) forbidden, and either changes nothing.
func (s *Session) AttachTools(ctx context.Context, names ...string) error {
	_, err := s.Send(ctx, &eventsv1.AttachTools{Names: names})
	return err
}

// DetachTools takes the named tools out of the session's tool set, from
// its next model request on; a later call to one gets an error result and
// tool_call_unknown. A name the session does not have is unknown_tool and
// changes nothing.
func (s *Session) DetachTools(ctx context.Context, names ...string) error {
	_, err := s.Send(ctx, &eventsv1.DetachTools{Names: names})
	return err
}

// Close stops the session (a stored one stays stored, to be restored on
// its next use).
func (s *Session) Close() { _ = s.CloseContext(context.Background()) }

// CloseContext is Close; for a user (ForUser), it stops the session only
// if it is theirs when the runtime holds it for the close (the id may
// have changed hands since the caller checked), and is invalid_session
// otherwise.
func (s *Session) CloseContext(ctx context.Context) error { return s.rt.reach.close(ctx, s.id) }

// SubscribeOptions tune Subscribe.
type SubscribeOptions struct {
	// Since replays the buffered events with a greater sequence number
	// first; 0 replays everything still buffered.
	Since uint64
	// Types filters by event name; a trailing * matches a prefix.
	Types []string
	// Buffer is the channel's capacity (default 1024); for Read, how far
	// the Reader may fall behind. A reader that falls further behind gets
	// events_lost instead of slowing the session.
	Buffer int
	// Buffered starts with the oldest event still buffered instead of at
	// Since: what a new follower of a restored session wants.
	Buffered bool
}

// Subscription is a live feed of a session's events.
type Subscription struct {
	// C carries the events; it is closed when the subscription or the
	// session ends.
	C <-chan *eventsv1.Event
	// stop ends the subscription (local.unsubscribe, or the follow of a
	// session that lives elsewhere).
	stop func() error
	once sync.Once
	err  error
}

// Subscribe feeds the session's events into a channel: the replay after
// opt.Since, then live events, with no gap and no duplicate.
func (s *Session) Subscribe(ctx context.Context, opt SubscribeOptions) (*Subscription, error) {
	f, err := opt.prepare()
	if err != nil {
		return nil, err
	}
	return s.rt.reach.subscribe(ctx, s, events.NewChannel(opt.Buffer), f, opt)
}

// prepare fills in the default buffer and returns the filter Types
// names, for Subscribe and Read.
func (opt *SubscribeOptions) prepare() (events.Filter, error) {
	if opt.Buffer <= 0 {
		opt.Buffer = 1024
	}
	f, err := events.NewFilter(opt.Types)
	if err != nil {
		return f, &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	return f, nil
}

// subscribe attaches ch to the session's stream. One whose answer did
// not come (its caller gave up, or the write the answer waited for
// failed) may have been attached all the same: it is detached, or it
// would keep the session loaded, fed, for nobody.
func (l *local) subscribe(ctx context.Context, s *Session, ch *events.Channel, f events.Filter, opt SubscribeOptions) (*Subscription, error) {
	if _, err := s.Send(ctx, &actors.SubscribeSink{Sink: ch, Since: opt.Since, Filter: f, Buffered: opt.Buffered}); err != nil {
		l.post(s, &actors.Unsubscribe{Sink: ch})
		return nil, err
	}
	sub := &Subscription{C: ch.C()}
	sub.stop = func() error { return l.unsubscribe(s, ch) }
	return sub, nil
}

// unsubscribe tells the session that ch's subscriber is gone and waits
// until ch is closed: by the session as it takes the news, or as it stops,
// whichever comes first. Waiting for the session's answer instead could
// wait out the request timeout: protoactor drops an Unsubscribe queued
// behind the session's stop, and the session had closed ch already.
func (l *local) unsubscribe(s *Session, ch *events.Channel) error {
	l.post(s, &actors.Unsubscribe{Sink: ch})
	t := time.NewTimer(l.rt.timeout)
	defer t.Stop()
	select {
	case <-ch.Done():
		return nil
	case <-t.C:
		return &Error{Code: events.CodeNotAlive, Message: fmt.Sprintf("session %s did not end the subscription within %v", s.id, l.rt.timeout)}
	}
}

// Close ends the subscription and closes C; the events still buffered in
// C stay there to read. Closing again does nothing.
func (sub *Subscription) Close() error {
	sub.once.Do(func() { sub.err = sub.stop() })
	return sub.err
}

// SubscribePID makes an actor of yours a subscriber: it receives the
// session's events as *eventsv1.Event messages — the replay after since,
// as Subscribe's, then the live ones, in order, those whose type matches
// types (as SubscribeOptions.Types; none matches all) — until it stops
// (the session watches it). The actor runs in the runtime's actor system
// (make that system yourself and give it to New with WithActorSystem), or
// in another that system reaches over protoactor remote. Subscribing the
// same PID again replaces its types and keeps one subscription. An actor
// subscriber does not keep its session loaded and stays subscribed across
// a passivation (WithPassivateAfter). A session that lives elsewhere
// (WithSessionsElsewhere) takes no actor subscriber: bad_request.
func (s *Session) SubscribePID(ctx context.Context, pid *actor.PID, since uint64, types ...string) error {
	f, err := events.NewFilter(types)
	if err != nil {
		return &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	return s.rt.reach.subscribePID(ctx, s, pid, since, f)
}

// subscribePID attaches the actor to the session's stream.
func (*local) subscribePID(ctx context.Context, s *Session, pid *actor.PID, since uint64, f events.Filter) error {
	_, err := s.Send(ctx, &actors.SubscribePID{PID: pid, Since: since, Filter: f})
	return err
}
