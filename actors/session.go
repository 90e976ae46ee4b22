package actors

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/actors/history"
	"github.com/tack-run/tack/actors/queue"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/internal/workers"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/tools"
)

// Spec is one session's resolved setup.
type Spec struct {
	ID     string
	Model  *llm.Model
	System string
	// Tools are the tools the model may call, plugins' tools included.
	Tools *tools.Set
	// Plugins are this session's own plugin instances.
	Plugins []plugins.Plugin
	// Restore, when set, is the stored session to take up.
	Restore *store.Snapshot
	// Stored is the configuration the store keeps for the session; the
	// session writes it anew after a model switch.
	Stored store.Config
	// Context bounds requests and sets when the history is compacted; nil
	// for none (an overflow is then an error, not a compaction).
	Context *llm.ContextConfig
	// CompactModel writes summaries; nil means the session's model.
	CompactModel *llm.Model
	// Subagents configures the sub-agents the subagent tool starts and
	// tells the session's depth; nil means the defaults at depth 0.
	Subagents *SubagentConfig
	// QueueMode is how queued prompts reach the model:
	// events.QueueOneAtATime (also when empty) or events.QueueAll.
	QueueMode events.QueueMode
	// Fork, when set, makes the new session a fork (fork.go).
	Fork *Fork
}

// session is the session actor's state. Only Receive touches it. Each
// field is a part with one job, named beside it with the file or package
// that holds its code; this file holds only dispatch: Receive, the cases
// every state shares, and one short handler per state.
//
// An idle session is mostly this struct, and its size class (768 bytes,
// TestSessionSizeClass) is what a million of them cost: a part's flags sit
// together, where they take no word of padding of their own.
type session struct {
	// spec is shared with the producer of the session's props, which
	// would make the actor again after a restart: one copy per session.
	spec    *Spec
	env     *Env
	home    home         // its PID and registry (home.go)
	machine *fsm.Machine // idle, running, streaming, executing_tools

	hist       history.History // the conversation (package history)
	compaction compactions     // the summary being made (compact.go)
	q          queue.Queues    // queued prompts and steering (package queue)
	run        *run            // the run in progress, nil while idle (run.go)

	p     persistence // the write gate and what the store holds (persist.go)
	out   outlet      // where events go: stream, sinks, tracer (outlet.go)
	hooks hooks       // plugins, and the rules approvals made (hooks.go)
	notes notes       // title, todos, id counters (state.go)
	spent spent       // usage and context (usage.go)
	load  load        // its runs and tools as counted outside (runlimit.go)
	lull  lull        // how long it has been quiet (passivate.go)
}

// Props returns the props of a session actor for spec. A session spawned
// from them alone starts no sub-agents: Registry spawns sessions that do.
func Props(env *Env, spec Spec) *actor.Props { return props(env, nil, spec) }

// dispatcher runs session mailboxes on reused goroutines, as many messages
// in one go as protoactor's default dispatcher (package workers says why).
var dispatcher actor.Dispatcher = workers.Default.Dispatcher(300)

// props returns the props of a session actor of registry reg.
func props(env *Env, reg *Registry, spec Spec) *actor.Props {
	sp := &spec
	return actor.PropsFromProducer(func() actor.Actor {
		return &session{
			spec:    sp,
			env:     env,
			home:    home{reg: reg},
			machine: fsm.New(),
			hooks:   hooks{chain: newChain(env, sp.Plugins)},
			out:     newOutlet(env, *sp),
		}
	}, actor.WithDispatcher(dispatcher), actor.WithMailbox(newMailbox))
}

// Receive dispatches a message to the handler of the current state after
// the cases every state shares. It never blocks: model streams and tools
// run in goroutines that report back with tagged messages.
//
// A prompt, steer or abort takes this path: held while the store is down
// (holdWhileDown, persist.go), refused when no state could take it up
// (admit), then handled by the current state.
func (s *session) Receive(ctx actor.Context) {
	defer s.flush()
	defer s.recoverPanic()
	if counts(ctx.Message()) {
		s.lull.activity++
	}
	if s.holdWhileDown(ctx) || s.common(ctx) || !s.admit(ctx) {
		return
	}
	switch s.machine.Current() {
	case fsm.Idle:
		s.idle(ctx)
	case fsm.Running:
		s.running(ctx)
	case fsm.Streaming:
		s.streaming(ctx)
	case fsm.ExecutingTools:
		s.executingTools(ctx)
	}
}

// common handles what means the same in every state; it reports whether
// it handled the message.
func (s *session) common(ctx actor.Context) bool {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.home.self, s.home.root = ctx.Self(), ctx.ActorSystem().Root
		s.env.observer().SessionStarted()
		s.notes.updated = s.env.now().UnixNano()
		if s.spec.Restore != nil {
			s.p.kept = &s.spec.Restore.Volatile
			s.recover(s.spec.Restore)
			s.spec.Restore = nil
		} else {
			s.emit(&eventsv1.SessionCreated{Model: s.spec.Model.Name})
			s.startFork()
		}
		s.startHook()
		s.passivateLater()
	case *actor.Stopping:
		s.hook(&plugins.Event{Hook: plugins.SessionEnd})
		s.shutdown()
	case *actor.Stopped, *actor.Restarting:
		// A restart (a panic that escaped recoverPanic) starts a new
		// session value, which counts itself again.
		s.env.observer().SessionStopped(s.machine.Current())
		s.uncountRun()
	case *eventsv1.GetState:
		s.reply(ctx, &eventsv1.Reply{Data: &eventsv1.Reply_State{State: s.state()}})
	case *GetSummary:
		list := &eventsv1.SessionList{Sessions: []*eventsv1.SessionSummary{s.summary()}}
		s.reply(ctx, &eventsv1.Reply{Data: &eventsv1.Reply_Sessions{Sessions: list}})
	case *eventsv1.GetMessages:
		msgs := slices.Clone(s.hist.Messages())
		if m.All {
			msgs = s.hist.All()
		}
		s.reply(ctx, &eventsv1.Reply{Data: &eventsv1.Reply_Messages{Messages: &eventsv1.MessageList{Messages: msgs}}})
	case *eventsv1.Subscribe:
		s.replay(ctx, m)
	case *SubscribeSink:
		since := m.Since
		if m.Buffered {
			since = s.out.log.LastSeq() - uint64(s.out.log.Len())
		}
		s.out.attach(m.Sink, since, m.Filter)
		s.reply(ctx, &eventsv1.Reply{})
	case *SubscribePID:
		ctx.Watch(m.PID)
		s.out.attach(&pidSink{root: s.home.root, pid: m.PID, filter: m.Filter}, m.Since, m.Filter)
		s.reply(ctx, &eventsv1.Reply{})
	case *Unsubscribe:
		s.out.detach(m.Sink)
		if ctx.Sender() != nil {
			ctx.Respond(&eventsv1.Reply{}) // shows nothing, so it waits for no write
		}
	case *UnsubscribePID:
		ctx.Unwatch(m.PID)
		s.out.detach(&pidSink{pid: m.PID})
		s.reply(ctx, &eventsv1.Reply{})
	case *actor.Terminated:
		// A watched subscriber stopped, or its node went away.
		s.env.logger().Debug("dropped a subscriber", zap.String("session", s.spec.ID), zap.Stringer("subscriber", m.Who), zap.Stringer("why", m.Why))
		s.out.detach(&pidSink{pid: m.Who})
	case *SwitchModel:
		s.switchModel(ctx, m.Model)
	case *modelResolved:
		s.modelResolved(m)
	case *eventsv1.Approve:
		s.approve(ctx, m)
	case *eventsv1.Reject:
		s.reject(ctx, m)
	case *eventsv1.Respond:
		s.respond(ctx, m)
	case *holdExpired:
		s.holdExpired(m)
	case *stored:
		s.stored(m)
	case *rewrite:
		s.retryWrite()
	case *settled:
		s.deliver(ctx, &eventsv1.Reply{})
	case *ExportPoint:
		s.exportPoint(ctx)
	case *inUse:
		ctx.Respond(&eventsv1.Reply{Error: s.use()})
	case *idleTrim:
		s.trim(m)
	case *passivateDue:
		s.passivateDue(m)
	case *passivateNow:
		s.passivateNow(ctx, m)
	case *eventsv1.Compact:
		s.compactCommand(ctx)
	case *eventsv1.AttachTools:
		s.changeTools(ctx, m.Names, true)
	case *eventsv1.DetachTools:
		s.changeTools(ctx, m.Names, false)
	case *ReplaceTools:
		s.replaceTools(m)
	case *ForkPoint:
		s.forkPoint(ctx, m)
	case *compactDone:
		s.compactionDone(m)
	case *abortDue:
		s.abortTimedOut(m)
	case *subagentStarted:
		s.subagentStarted(m)
	case *childEvent:
		s.childEvent(m)
	default:
		return false
	}
	return true
}

// admit refuses a prompt, steer or abort that no state could take up,
// with the error the protocol names: an option that is not allowed
// (bad_request), input to a session a plugin refused (not_alive), an
// image that is not allowed (bad_request). It reports whether the message
// goes on to the state's handler.
func (s *session) admit(ctx actor.Context) bool {
	code, err := s.inadmissible(ctx.Message())
	if err != nil {
		s.fail(ctx, code, err.Error())
	}
	return err == nil
}

// inadmissible returns why msg cannot be taken up, and its code; nil when
// it can.
func (s *session) inadmissible(msg any) (code string, err error) {
	switch m := msg.(type) {
	case *eventsv1.Abort:
		return events.CodeBadRequest, events.CheckAbort(m)
	case *eventsv1.Prompt:
		if err := events.CheckPrompt(m); err != nil {
			return events.CodeBadRequest, err
		}
	case *eventsv1.Steer:
	default:
		return "", nil
	}
	if s.hooks.refused != "" {
		return events.CodeNotAlive, errors.New(s.hooks.refused)
	}
	return events.CodeBadRequest, llm.CheckImages(msg.(userInput).GetImages(), s.env.MaxImageBytes)
}

// idle: a prompt or steer starts a run (superseding what a paused run
// waits for); abort is a no-op that still tells, or aborts a paused run.
func (s *session) idle(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *eventsv1.Prompt:
		s.promptAtIdle(ctx, m)
	case *eventsv1.Steer:
		s.steerIdle(ctx, inputOf(m))
	case *eventsv1.Abort:
		s.abortAt(ctx, m, time.Now())
	default:
		s.stray(ctx)
	}
}

// running: the request is out, no chunk yet.
func (s *session) running(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *eventsv1.Prompt:
		s.promptBusy(ctx, m)
	case *eventsv1.Steer:
		s.queueSteer(ctx, inputOf(m), false)
	case *eventsv1.Abort:
		s.abortAt(ctx, m, time.Now())
	case *streamChunk:
		s.firstChunk(m)
	case *streamDone:
		s.responseDone(m)
	default:
		s.stray(ctx)
	}
}

// streaming: chunks are arriving.
func (s *session) streaming(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *eventsv1.Prompt:
		s.promptBusy(ctx, m)
	case *eventsv1.Steer:
		s.queueSteer(ctx, inputOf(m), false)
	case *eventsv1.Abort:
		s.abortAt(ctx, m, time.Now())
	case *streamChunk:
		s.chunk(m)
	case *streamDone:
		s.responseDone(m)
	default:
		s.stray(ctx)
	}
}

// executingTools: a tool batch is running.
func (s *session) executingTools(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *eventsv1.Prompt:
		s.promptBusy(ctx, m)
	case *eventsv1.Steer:
		s.queueSteer(ctx, inputOf(m), m.InterruptTools == nil || *m.InterruptTools)
	case *eventsv1.Abort:
		s.abortAt(ctx, m, time.Now())
	case *toolUpdate:
		s.toolUpdate(m)
	case *toolDone:
		s.toolDone(m)
	default:
		s.stray(ctx)
	}
}

// stray drops messages that mean nothing in the current state: stale
// reports from cancelled runs, and commands this state ignores.
func (s *session) stray(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *streamChunk, *streamDone, *toolUpdate, *toolDone, actor.SystemMessage, actor.AutoReceiveMessage:
	default:
		s.fail(ctx, events.CodeBadRequest, fmt.Sprintf("%T is not a session command", ctx.Message()))
	}
}

// emit publishes one event (once the store holds what it tells).
func (s *session) emit(payload proto.Message) {
	s.publish(events.New(payload))
}

// reply answers the sender of a request (once the store holds what the
// command changed); plain sends get no answer.
func (s *session) reply(ctx actor.Context, r *eventsv1.Reply) {
	if ctx.Sender() != nil {
		s.deliver(ctx, r)
	}
}

// replyAtOnce answers a request without waiting for any write: the answer
// to an abort of a run, which like agent_abort must not wait behind a slow
// or failing store (what it stopped stays stopped whatever the store does).
func (s *session) replyAtOnce(ctx actor.Context, r *eventsv1.Reply) {
	if ctx.Sender() != nil {
		ctx.Respond(r)
	}
}

// fail answers a request with an error.
func (s *session) fail(ctx actor.Context, code, message string) {
	s.reply(ctx, &eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: code, Message: message}})
}

// recoverPanic turns a panic in a handler into an error event: the session
// survives with its committed history.
func (s *session) recoverPanic() {
	if r := recover(); r != nil {
		s.env.logger().Error("session handler panicked", zap.String("session", s.spec.ID), zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
		s.emit(&eventsv1.Error{Code: events.CodeInternal, Message: fmt.Sprintf("internal error: %v", r)})
	}
}

func (s *session) nextSteerRef() string {
	s.notes.ids.Steers++
	return "st-" + strconv.FormatUint(s.notes.ids.Steers, 10)
}

func (s *session) switchModel(ctx actor.Context, m *llm.Model) {
	s.setModel(m)
	s.reply(ctx, &eventsv1.Reply{})
}

// setModel makes the next request use m: the user's switch_model and a
// plugin's. The stored configuration names the new model from the next
// write on, so a restored session comes back on it.
func (s *session) setModel(m *llm.Model) {
	from := s.spec.Model.Name
	s.spec.Model = m
	s.spec.Stored.Model, s.spec.Stored.Script = m.Name, nil
	s.p.switched = true
	s.touch()
	s.emit(&eventsv1.ModelSwitched{From: from, To: m.Name})
}

// newChain builds a session's plugin chain; nil when it has no plugins.
func newChain(env *Env, ps []plugins.Plugin) *plugins.Chain {
	if len(ps) == 0 {
		return nil
	}
	return plugins.NewChain(env.PluginBudget, ps...)
}

// startHook asks session_start; a plugin that aborts refuses the session,
// whose commands then fail with not_alive.
func (s *session) startHook() {
	if d := s.hook(&plugins.Event{Hook: plugins.SessionStart}).Stop; d != nil {
		s.hooks.refused = fmt.Sprintf("plugin %s refused the session: %s", d.Plugin, orAborted(d.Action.Reason))
		s.emit(&eventsv1.Error{Code: events.CodeNotAlive, Message: s.hooks.refused})
	}
}

// shutdown cancels whatever is running and closes channel subscribers.
func (s *session) shutdown() {
	if s.lull.passivation != nil {
		s.lull.passivation.Stop()
	}
	if s.lull.trim != nil {
		s.lull.trim.Stop()
	}
	if s.run != nil {
		s.run.cancelAll()
	}
	// A reply still waiting for its write would never go: its caller
	// hears not_alive now instead of waiting out its timeout.
	for _, it := range s.p.j.Drop() {
		if it.To != nil && it.Reply != nil {
			s.home.send(it.To, &eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: events.CodeNotAlive, Message: "the session stopped before its answer was stored"}})
		}
	}
	for _, c := range append([]events.Sink(nil), s.out.sinks...) {
		s.out.detach(c)
	}
}

func promptReply(queued bool) *eventsv1.Reply {
	return &eventsv1.Reply{Data: &eventsv1.Reply_Prompt{Prompt: &eventsv1.PromptReply{Queued: queued}}}
}

func steerReply(ref string) *eventsv1.Reply {
	return &eventsv1.Reply{Data: &eventsv1.Reply_Steer{Steer: &eventsv1.SteerReply{Ref: ref}}}
}

// cancelled reports whether err is a context cancellation.
func cancelled(err error) bool {
	return err == context.Canceled || err == context.DeadlineExceeded
}
