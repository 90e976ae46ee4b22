package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
)

// subagentJob makes a child session, hands it its task and waits for the
// end of its run, on a goroutine of its own.
type subagentJob struct {
	// home is the parent's: where the child is made, and where the
	// result goes.
	home  home
	tag   tag
	index int
	id    string
	cfg   spec.Session
	task  string
	now   func() time.Time
	// persisted: with a store, the child is unloaded once done (it stays
	// stored and is restored on its next use); without one it stays.
	persisted bool
	// halt is closed when the child is to stop after its running tools.
	halt chan struct{}
}

// childTimeout bounds each request to the parent or the child.
const childTimeout = 10 * time.Second

// run reports the call's result to the parent; the parent drops it when
// the call was settled meanwhile.
func (j *subagentJob) run(ctx context.Context) {
	res := j.work(ctx)
	j.home.post(&toolDone{tag: j.tag, index: j.index, result: res, ended: j.now()})
}

// work makes the child, runs its task and returns the call's result.
func (j *subagentJob) work(ctx context.Context) tools.Result {
	fail := func(format string, args ...any) tools.Result {
		return tools.Result{Content: fmt.Sprintf("sub-agent %s: ", j.id) + fmt.Sprintf(format, args...), IsError: true}
	}
	var respec Respec
	if j.home.place != nil {
		respec = j.home.place.ChildRespec()
	}
	if respec == nil {
		return fail("this runtime cannot start sub-agents (its sessions have no registry that resolves configurations)")
	}
	// The parent's counter is stored before the child exists, so a
	// restored parent never names another child the same.
	if err := j.request(j.home.self, &Settle{}); err != nil {
		return fail("%v", err)
	}
	sp, err := respec(j.id, j.cfg)
	if err != nil {
		return fail("%v", err)
	}
	sp.Stored = &j.cfg
	if ctx.Err() != nil {
		return tools.Result{Content: tools.InterruptedByAbort, IsError: true}
	}
	pid, err := j.home.place.Create(context.WithoutCancel(ctx), sp)
	if err != nil {
		return fail("%v", err)
	}
	sink := &childSink{parent: j.home, tag: j.tag, index: j.index, child: j.id, done: make(chan struct{})}
	defer func() { j.release(pid, sink) }()
	j.home.post(&subagentStarted{tag: j.tag, index: j.index, child: j.id})
	if pid, err = j.subscribe(ctx, pid, sink); err != nil {
		return fail("%v", err)
	}
	// An abort while the child was made (a store's write can take a
	// while) leaves it unprompted: its run would start after the parent's
	// abort was answered.
	select {
	case <-ctx.Done():
		return tools.Result{Content: tools.InterruptedByAbort, IsError: true}
	case <-j.halt:
		return tools.Result{Content: tools.InterruptedByAbort, IsError: true}
	default:
	}
	if err := j.request(pid, &eventsv1.Prompt{Text: j.task}); err != nil {
		return fail("%v", err)
	}
	halt := j.halt
	for {
		select {
		case <-sink.done:
			return sink.result(j.id)
		case <-halt:
			j.home.root().Send(pid, &eventsv1.Abort{KillTools: string(events.KillNone)})
			halt = nil // the child's result still comes, once its tools are done
		case <-ctx.Done():
			kill := events.KillKillable
			if errors.Is(context.Cause(ctx), errKillAll) {
				kill = events.KillAll
			}
			j.home.root().Send(pid, &eventsv1.Abort{KillTools: string(kill)})
			<-sink.done // the child's run ends at once, or when its immune tools are done
			return tools.Result{Content: tools.InterruptedByAbort, IsError: true}
		}
	}
}

// subscribe attaches sink to the child, whose actor is pid, and returns
// the child's actor. In a runtime that passivates, a child that went
// quiet for its runtime's quiet period before the sink came may have
// parked meanwhile (a dead letter): it is woken by id and asked again,
// up to subscribeTries times in all. Once attached, the sink keeps it
// loaded until release.
func (j *subagentJob) subscribe(ctx context.Context, pid *actor.PID, sink *childSink) (*actor.PID, error) {
	for try := 1; ; try++ {
		err := j.request(pid, &SubscribeSink{Sink: sink, Buffered: true})
		if !errors.Is(err, actor.ErrDeadLetter) || try == subscribeTries {
			return pid, err
		}
		woken, err := j.home.place.Get(context.WithoutCancel(ctx), j.id)
		if err != nil {
			return pid, err
		}
		pid = woken
	}
}

// subscribeTries bounds subscribe's tries: each but the last met a child
// that parked before the sink reached it.
const subscribeTries = 4

// request sends msg to pid and waits for its reply, returning its error.
func (j *subagentJob) request(pid *actor.PID, msg any) error {
	res, err := j.home.root().RequestFuture(pid, msg, childTimeout).Result()
	if err != nil {
		return fmt.Errorf("no answer to %T: %w", msg, err)
	}
	if e := res.(*eventsv1.Reply).GetError(); e != nil {
		return fmt.Errorf("%s: %s", e.Code, e.Message)
	}
	return nil
}

// release lets a child go once its run is over: with a store it is
// unloaded (it stays stored and readable, restored on its next use);
// without one it stays loaded, as nothing else keeps it, and only the
// parent's link to it goes.
func (j *subagentJob) release(pid *actor.PID, sink *childSink) {
	if j.persisted {
		j.home.place.Close(j.id)
		return
	}
	j.home.root().Send(pid, &Unsubscribe{Sink: sink})
}

// childSink passes a child's events to its parent until the child's run
// ends. Deliver and Close run on the child's goroutine; the job reads the
// outcome once done is closed.
type childSink struct {
	parent home
	tag    tag
	index  int
	child  string
	done   chan struct{}

	ended  bool
	reason string
	text   string // the last assistant text
	err    string // the last error event's message
}

// Deliver passes ev on and keeps what the result is made of.
func (k *childSink) Deliver(ev *eventsv1.Event) {
	if k.ended {
		return
	}
	k.parent.post(&childEvent{tag: k.tag, index: k.index, child: k.child, ev: ev})
	switch {
	case ev.GetMessageCommitted().GetMessage().GetRole() == "assistant":
		k.text = ev.GetMessageCommitted().GetMessage().GetContent()
	case ev.GetError() != nil:
		k.err = ev.GetError().GetMessage()
	case ev.GetAgentEnd() != nil:
		k.reason = ev.GetAgentEnd().GetReason()
		k.finish()
	}
}

// Close is called when the child stops before its run ended.
func (k *childSink) Close() {
	if !k.ended {
		k.reason = "closed"
		k.finish()
	}
}

func (k *childSink) finish() {
	k.ended = true
	close(k.done)
}

// result is the call's result: the child's final text when its run
// completed, else an error result that says how it ended.
func (k *childSink) result(id string) tools.Result {
	if k.reason == string(events.EndCompleted) {
		return tools.Result{Content: k.text}
	}
	why := k.err
	if why == "" {
		why = k.text
	}
	msg := fmt.Sprintf("sub-agent %s ended: %s", id, k.reason)
	if why != "" {
		msg += ": " + why
	}
	return tools.Result{Content: msg, IsError: true}
}
