package actors

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors/history"
	"github.com/tack-run/tack/actors/queue"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/internal/workers"
	"github.com/tack-run/tack/llm"
)

// session is the session actor's state. Only Receive touches it. Each
// field is a part with one job, named beside it with the file or package
// that holds its code; this file holds only dispatch: Receive, the cases
// every state shares, and one short handler per state.
//
// An idle session is mostly this struct, and its size class (512 bytes,
// TestSessionSizeClass) is what a million of them cost: a part's flags
// sit together, where they take no word of padding of their own, and what
// only a session that has run, queued, compacted or rolled back needs
// (its usage, what its hooks keep for later, its queues, its history's
// archive and rolled-back spans) waits behind a pointer that stays nil
// until then.
type session struct {
	spec    *Spec        // what it was spawned with (one copy per session)
	home    home         // its runtime, its PID and its place (home.go)
	machine *fsm.Machine // idle, running, streaming, executing_tools

	hist       history.History // the conversation (package history)
	compaction compactions     // the summary being made (compact.go)
	q          queue.Queues    // queued prompts and steering (package queue)
	run        *run            // the run in progress, nil while idle (run.go)

	p     persistence // the write gate and what the store holds (persist.go)
	out   outlet      // where events go: stream, sinks, tracer (outlet.go)
	hooks hooks       // plugins, and the rules approvals made (hooks.go)
	notes notes       // title, todos, id counters, usage (state.go)
	load  load        // what its runtime counts: runs, tools, quiet (runlimit.go)
}

// dispatcher runs session mailboxes on reused goroutines, as many messages
// in one go as protoactor's default dispatcher (package workers says why).
var dispatcher actor.Dispatcher = workers.Default.Dispatcher(300)

// Name is the name a registry spawns session id's actor under (Spawn),
// by which it is found in the actor system's process table.
func Name(id string) string { return "session/" + id }

// Spawn starts the actor of a session for spec under name, spawned by
// place (nil: a session that never passivates and starts no sub-agents).
func Spawn(root *actor.RootContext, env *Env, place Place, sp Spec, name string) (*actor.PID, error) {
	sp = sp.Shared()
	s := &session{
		spec:    &sp,
		home:    home{env: env, place: place},
		machine: fsm.New(),
		hooks:   hooks{chain: newChain(env, sp.Plugins)},
		out:     newOutlet(env, sp),
	}
	spawning.Lock()
	defer func() {
		spawning.next = nil // taken by spawned, unless the spawn failed first
		spawning.Unlock()
	}()
	spawning.next = s
	return root.SpawnNamed(sessionProps, name)
}

// sessionProps are the props of every session actor. Props of its own,
// with a producer closed over its spec, cost each live session about 290
// bytes; these props' producer takes the session Spawn made instead,
// which protoactor calls within SpawnNamed, on Spawn's goroutine.
var sessionProps = actor.PropsFromProducer(spawned,
	actor.WithDispatcher(dispatcher), actor.WithMailbox(newMailbox), actor.WithGuardian(resume))

// spawning hands the session Spawn made to spawned.
var spawning struct {
	sync.Mutex
	next *session
}

// spawned is the producer of sessionProps.
func spawned() actor.Actor {
	s := spawning.next
	if s == nil {
		panic("actors: a session actor was produced outside Spawn")
	}
	spawning.next = nil
	return s
}

// resume supervises session actors: a panic that escapes the session's
// own recovery (recoverPanic: a handler's panic is logged, told as an
// error and the session goes on) resumes the same session too, with its
// history and its runs. protoactor's default would restart the actor,
// which means producing a new one: a session with nothing it held.
var resume = actor.NewOneForOneStrategy(0, 0, func(any) actor.Directive { return actor.ResumeDirective })

// Receive dispatches a message to the handler of the current state after
// the cases every state shares. It never blocks: model streams and tools
// run in goroutines that report back with tagged messages.
//
// A prompt, steer or abort takes this path: held while the store is down
// (holdWhileDown, persist.go), refused when no state could take it up
// (admit), then handled by the current state.
func (s *session) Receive(ctx actor.Context) {
	s.out.moment = 0
	defer s.flush()
	defer s.recoverPanic()
	if counts(ctx.Message()) {
		s.load.activity++
	}
	if s.foreign(ctx) || s.holdWhileDown(ctx) || s.common(ctx) || !s.admit(ctx) {
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

// batchEnd is called by the mailbox once it has run what it held, or
// as much as it runs in one go: the feed's readers wake once for all the
// events the batch published.
func (s *session) batchEnd() { s.out.wake() }

// common handles what means the same in every state; it reports whether
// it handled the message.
func (s *session) common(ctx actor.Context) bool {
	if s.lifecycle(ctx) || s.read(ctx) || s.subscription(ctx) {
		return true
	}
	switch m := ctx.Message().(type) {
	case *SwitchModel:
		s.switchModel(ctx, m)
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
	case *Settle:
		s.deliver(ctx, &eventsv1.Reply{})
	case *ExportPoint:
		s.exportPoint(ctx)
	case *ConfigPoint:
		cfg := s.config()
		ctx.Respond(&cfg)
	case *InUse:
		ctx.Respond(&eventsv1.Reply{Error: s.use()})
	case *idleTrim:
		s.trim(m)
	case *PassivateDue:
		s.passivateDue(m)
	case *PassivateNow:
		s.passivateNow(m)
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
	if why := s.hooks.refused(); why != "" {
		return events.CodeNotAlive, errors.New(why)
	}
	return events.CodeBadRequest, llm.CheckImages(msg.(userInput).GetImages(), s.home.env.MaxImageBytes)
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
