package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/tools"
)

// abortBound is guarantee 1 of docs/architecture.md: agent_abort reaches every
// subscriber within 100 ms of the command, whatever the tools do.
const abortBound = 100 * time.Millisecond

// forwarder spawns an actor that passes the events it receives to a Go
// channel: an actor subscriber.
func forwarder(sys *actor.ActorSystem, buffer int) (*actor.PID, <-chan *eventsv1.Event) {
	out := make(chan *eventsv1.Event, buffer)
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if ev, ok := ctx.Message().(*eventsv1.Event); ok {
			select {
			case out <- ev:
			default: // the test reads far less than buffer events
			}
		}
	}))
	return pid, out
}

// TestAbortDelivery: with a tool that ignores cancellation and an immune
// tool in the batch, agent_abort reaches a channel subscriber and an actor
// subscriber within the bound; the session goes idle when the immune tool
// ends, with both results committed; the stubborn tool is counted as
// abandoned after the grace period until it returns.
func TestAbortDelivery(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"tool_calls":[{"name":"sleep_stubborn","args":{"ms":1500}},{"name":"sleep_immune","args":{"ms":400}}]},
		{"text":"never requested"}]}`, &Env{Settings: Settings{ToolGrace: 50 * time.Millisecond}})
	ch := events.NewChannel(1024)
	h.ok(&SubscribeSink{Sink: ch})
	pid, fwd := forwarder(h.sys, 1024)
	h.ok(&SubscribePID{PID: pid})

	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("tool_execution_start", 2)
	mark := h.rec.Len()

	start := time.Now()
	h.sys.Root.Send(h.pid, &eventsv1.Abort{})
	chLatency, pidLatency := time.Duration(-1), time.Duration(-1)
	timeout := time.After(wait)
	for chLatency < 0 || pidLatency < 0 {
		select {
		case ev := <-ch.C():
			if ev.GetAgentAbort() != nil {
				chLatency = time.Since(start)
			}
		case ev := <-fwd:
			if ev.GetAgentAbort() != nil {
				pidLatency = time.Since(start)
			}
		case <-timeout:
			t.Fatalf("agent_abort not delivered: channel %v, actor %v", chLatency, pidLatency)
		}
	}
	t.Logf("agent_abort delivered in %v (channel), %v (actor)", chLatency, pidLatency)
	if chLatency > abortBound || pidLatency > abortBound {
		t.Errorf("agent_abort took %v (channel) and %v (actor), want at most %v", chLatency, pidLatency, abortBound)
	}

	end := h.waitFor("agent_end", 1)
	if !h.expect(seq(heldPrefixFor("sleep_stubborn", "sleep_immune"),
		one("agent_abort", "tool_killed"), toolEnd, // the stubborn tool, settled at once
		toolEnd, // the immune tool, when it is done
		twoResults, one("turn_end"), abortEnd)...) {
		t.FailNow()
	}
	evs := h.since(mark)
	if k := evs[1].GetToolKilled(); k.GetName() != "sleep_stubborn" || k.GetCallId() != "c-1" {
		t.Errorf("tool_killed = %v", k)
	}
	if e := evs[4].GetToolExecutionEnd(); e.GetName() != "sleep_immune" || !e.GetOk() || e.GetResult() != "slept 400 ms" {
		t.Errorf("immune tool end = %v", e)
	}
	if got := end.GetAgentEnd(); got.GetReason() != string(events.EndAborted) || got.GetRunId() != "r-1" {
		t.Errorf("agent_end = %v", got)
	}
	want := []string{"user:go", "assistant:", "tool:" + tools.InterruptedByAbort, "tool:slept 400 ms"}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}

	// The stubborn tool is abandoned, not waited for: counted once the
	// grace period is over, no longer once it returns.
	h.pollState("abandoned_tools 1", func(st *eventsv1.SessionState) bool { return st.AbandonedTools == 1 })
	st := h.pollState("abandoned_tools 0", func(st *eventsv1.SessionState) bool { return st.AbandonedTools == 0 })
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Errorf("history after the stubborn tool returned = %q, want %q", got, want)
	}
	if st.State != "idle" || h.rec.Len() != mark+len(evs) {
		t.Errorf("the stubborn tool's late result changed something: state %s, %d new events", st.State, h.rec.Len()-mark-len(evs))
	}
	checkLog(t, h.rec.Events())
}

// heldPrefixFor is what a session emits from its creation until a batch
// of the named tools is running (the prompt "go", a tool-only response).
func heldPrefixFor(names ...string) []string {
	out := seq(one("session_created"), runStart, toolAnswer, one("tool_calls", "state_changed", "agent_status"))
	for range names {
		out = append(out, "tool_execution_start")
	}
	return out
}

// TestAbortsAndSteersInQuickSuccession sends commands without waiting for
// replies or events in between; the session stays valid and then completes
// a normal prompt.
func TestAbortsAndSteersInQuickSuccession(t *testing.T) {
	// Model requests after the first are held before they start, so the
	// order of events follows from the order of the commands alone, and a
	// cancelled request takes no turn of the script.
	const script = `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":60000}}]},{"text":"answer"}]}`
	start := func(t *testing.T) (*harness, gate) {
		g := newGate()
		h := newHarnessModel(t, heldAfter(t, "", script, g, 0, 1), nil)
		h.ok(&eventsv1.Prompt{Text: "go"})
		h.waitFor("tool_execution_start", 1)
		return h, g
	}
	// burst sends cmds back to back, then checks every reply.
	burst := func(h *harness, cmds ...any) []*eventsv1.Reply {
		h.t.Helper()
		futures := make([]*actor.Future, len(cmds))
		for i, c := range cmds {
			futures[i] = h.sys.Root.RequestFuture(h.pid, c, wait)
		}
		replies := make([]*eventsv1.Reply, len(cmds))
		for i, f := range futures {
			res, err := f.Result()
			if err != nil {
				h.t.Fatalf("%T: %v", cmds[i], err)
			}
			replies[i] = res.(*eventsv1.Reply)
			if replies[i].Error != nil {
				h.t.Errorf("%T: %v", cmds[i], replies[i].Error)
			}
		}
		return replies
	}
	interrupted := "tool:" + tools.InterruptedByAbort

	t.Run("abort,steer,abort,steer,abort,steer", func(t *testing.T) {
		h, g := start(t)
		mark := h.rec.Len()
		replies := burst(h,
			&eventsv1.Abort{}, &eventsv1.Steer{Text: "s1"},
			&eventsv1.Abort{}, &eventsv1.Steer{Text: "s2"},
			&eventsv1.Abort{KillTools: string(events.KillAll), ClearQueue: true}, &eventsv1.Steer{Text: "s3"})
		for i, ref := range []string{"st-1", "st-2", "st-3"} {
			if got := replies[2*i+1].GetSteer().GetRef(); got != ref {
				t.Errorf("steer %d: ref %q, want %s", i+1, got, ref)
			}
		}
		g.open()
		h.waitRunEnd("r-4")
		abortRunning := seq(one("agent_abort", "turn_end"), abortEnd)
		expectLabelled(t, "the burst", h.since(mark), seq(
			one("agent_abort", "tool_killed"), toolEnd, one("message_committed", "turn_end"), abortEnd,
			runStart, abortRunning, // s1 starts r-2
			runStart, abortRunning, // s2 starts r-3
			runStart, answer, runEnd)) // s3 starts r-4, which completes
		usable(t, h, []string{"user:go", "assistant:", interrupted, "user:s1", "user:s2", "user:s3", "assistant:answer"})
	})

	t.Run("steer,steer,steer,abort,abort,abort", func(t *testing.T) {
		h, g := start(t)
		mark := h.rec.Len()
		burst(h,
			&eventsv1.Steer{Text: "s1"}, &eventsv1.Steer{Text: "s2"}, &eventsv1.Steer{Text: "s3"},
			&eventsv1.Abort{}, &eventsv1.Abort{KillTools: string(events.KillNone)}, &eventsv1.Abort{ClearQueue: true})
		expectLabelled(t, "the burst", h.since(mark), seq(
			// s1 cancels the sleep and starts the next turn, with s1 applied.
			one("steering_received", "tool_skipped_for_steering"), toolEnd, one("message_committed", "turn_end"),
			one("message_committed", "steering_applied"), nextTurn,
			one("steering_received", "steering_received"), // s2, s3 queued
			one("agent_abort", "turn_end"), abortEnd,      // abort while running; s2, s3 survive
			one("agent_abort"), // abort in idle
			one("agent_abort", "steering_dropped", "steering_dropped"))) // clear_queue drops them
		want{state: "idle"}.check(t, h.state())
		g.open()
		usable(t, h, []string{"user:go", "assistant:", "tool:" + tools.SkippedForSteering, "user:s1"})
	})
}

// usable checks that a session is idle with history before, then runs the
// prompt "again" to completion.
func usable(t *testing.T, h *harness, before []string) {
	t.Helper()
	if got := contents(h.history()); !slices.Equal(got, before) {
		t.Errorf("history = %q, want %q", got, before)
	}
	st := h.state()
	if st.State != "idle" {
		t.Fatalf("state = %s, want idle", st.State)
	}
	mark, ends := h.rec.Len(), len(findAll(h.rec.Events(), "agent_end"))
	if h.ok(&eventsv1.Prompt{Text: "again"}).GetPrompt().GetQueued() {
		t.Error("a prompt in idle was queued")
	}
	h.waitFor("agent_end", ends+1)
	expectLabelled(t, "the next prompt", h.since(mark), seq(runStart, answer, runEnd))
	if got, want := contents(h.history()), append(slices.Clone(before), "user:again", "assistant:answer"); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	checkLog(t, h.rec.Events())
}

// findAll returns the events of type name in evs.
func findAll(evs []*eventsv1.Event, name string) []*eventsv1.Event {
	var out []*eventsv1.Event
	for _, ev := range evs {
		if events.Type(ev) == name {
			out = append(out, ev)
		}
	}
	return out
}

// TestActorResubscribes: an actor that subscribes again (a reconnect with
// since, a new filter) keeps one subscription; it used to get every later
// event twice.
func TestActorResubscribes(t *testing.T) {
	h := newHarness(t, `{"turns":[{"text":"unused"}]}`, nil)
	pid, fwd := forwarder(h.sys, 64)
	h.ok(&SubscribePID{PID: pid})
	h.ok(&SubscribePID{PID: pid, Since: uint64(h.rec.Len())})
	h.ok(&eventsv1.Abort{})
	h.ok(&eventsv1.Abort{})
	aborts := h.waitFor("agent_abort", 2)
	// Deliveries reach the actor in publish order: any duplicate of the
	// first abort arrives before the second one.
	var got []uint64
	timeout := time.After(wait)
	for {
		select {
		case ev := <-fwd:
			got = append(got, ev.Seq)
			if ev.Seq != aborts.Seq {
				continue
			}
		case <-timeout:
			t.Fatalf("the second agent_abort never reached the actor; got seqs %v", got)
		}
		break
	}
	if want := []uint64{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("the actor got seqs %v, want %v (each event once)", got, want)
	}
}

// gatePlugin holds the first time it is asked (its hook: before_tool
// unless set) until released, then lets everything through; it counts
// what it was asked.
type gatePlugin struct {
	hook    plugins.Hook
	asked   atomic.Int32
	first   chan struct{}
	release chan struct{}
}

func (p *gatePlugin) Name() string  { return "gate" }
func (p *gatePlugin) Priority() int { return 100 }
func (p *gatePlugin) Hooks() []plugins.Hook {
	if p.hook == "" {
		return []plugins.Hook{plugins.BeforeTool}
	}
	return []plugins.Hook{p.hook}
}
func (p *gatePlugin) Handle(*plugins.Event) []plugins.Action {
	if p.asked.Add(1) == 1 {
		close(p.first)
		<-p.release
	}
	return nil
}

// TestAbortBetweenPluginAsks: a batch start asks the plugins about each
// call in turn, each up to its budget; an abort that comes while they
// are asked about one call stops the batch there: the calls left are
// settled as interrupted without a plugin being asked or a tool started,
// and the abort ends the run. Before, every call was asked about first: a
// plugin taking 40 ms a call held an abort behind a batch of 50 calls for
// two seconds.
func TestAbortBetweenPluginAsks(t *testing.T) {
	const calls = 10
	gate := &gatePlugin{first: make(chan struct{}), release: make(chan struct{})}
	env := &Env{}
	env.PluginBudget = time.Minute
	sys := newSystem(t)
	script := `{"turns":[{"tool_calls":[` + strings.TrimSuffix(strings.Repeat(`{"name":"sleep","args":{"ms":30000}},`, calls), ",") + `]},{"text":"never"}]}`
	h := spawnSpec(t, sys, newPlace(sys, env, nil), Spec{ID: "s1", Model: scriptModel(t, "", script), Tools: demoSet(t),
		Plugins: []plugins.Plugin{gate}})
	h.ok(&eventsv1.Prompt{Text: "go"})
	<-gate.first
	h.sys.Root.Send(h.pid, &eventsv1.Abort{}) // queued behind the batch start
	close(gate.release)
	if r := h.waitFor("agent_end", 1).GetAgentEnd().Reason; r != string(events.EndAborted) {
		t.Errorf("agent_end reason %s", r)
	}
	if n := gate.asked.Load(); n != 1 {
		t.Errorf("the plugin was asked about %d calls, want 1", n)
	}
	if n := len(eventsOf(h, "tool_killed")); n != 1 {
		t.Errorf("%d tools killed, want the one started", n)
	}
	want := []string{"user:go", "assistant:"}
	for range calls {
		want = append(want, "tool:"+tools.InterruptedByAbort)
	}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
}

// TestAbortBeforeWaitingResults: results of a batch wait behind commands
// in the mailbox, so an abort sent while the plugins are asked about one
// result (after_tool, each within its budget) is handled next: the
// results still waiting are settled as interrupted, unasked, and no
// model request follows. Before, each result was a message ahead of the
// abort: a plugin taking 40 ms a result held an abort behind a batch of
// 50 for two seconds, and the next request went out first.
func TestAbortBeforeWaitingResults(t *testing.T) {
	const calls = 10
	gate := &gatePlugin{first: make(chan struct{}), release: make(chan struct{}), hook: plugins.AfterTool}
	env := &Env{}
	env.PluginBudget = time.Minute
	sys := newSystem(t)
	// The batch's tools end together, once released.
	release, returned := make(chan struct{}), atomic.Int32{}
	together := tools.Define(tools.Spec{Name: "together", Description: "ends when released", Schema: json.RawMessage(`{"type":"object"}`), Kind: tools.Killable},
		func(context.Context, json.RawMessage, func(string)) (string, error) {
			<-release
			defer returned.Add(1)
			return "x", nil
		})
	script := `{"turns":[{"tool_calls":[` + strings.TrimSuffix(strings.Repeat(`{"name":"together"},`, calls), ",") + `]},{"text":"never"}]}`
	h := spawnSpec(t, sys, newPlace(sys, env, nil), Spec{ID: "s1", Model: scriptModel(t, "", script), Tools: demoSet(t, together),
		Plugins: []plugins.Plugin{gate}})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("tool_execution_start", calls)
	close(release)
	<-gate.first
	eventually.Within(t, 10*time.Second, func() error {
		if n := returned.Load(); n < calls {
			return fmt.Errorf("%d tools returned", n)
		}
		return nil
	})
	// Their results are posted a moment after; a fixed session passes
	// whatever it finds.
	time.Sleep(10 * time.Millisecond)
	// The abort goes behind the results, while the first is handled.
	h.sys.Root.Send(h.pid, &eventsv1.Abort{})
	close(gate.release)
	if r := h.waitFor("agent_end", 1).GetAgentEnd().Reason; r != string(events.EndAborted) {
		t.Errorf("agent_end reason %s", r)
	}
	if n := gate.asked.Load(); n != 1 {
		t.Errorf("the plugin was asked about %d results, want 1", n)
	}
	if n := len(eventsOf(h, "request_start")); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
	// The result handled first is whichever tool ended first.
	got := contents(h.history())
	results := map[string]int{}
	for _, m := range got[2:] {
		results[m]++
	}
	if len(got) != calls+2 || results["tool:x"] != 1 || results["tool:"+tools.InterruptedByAbort] != calls-1 {
		t.Errorf("history = %q, want one result and %d interrupted", got, calls-1)
	}
}

// TestRefusedAbortStopsNoBatch: an abort the session will refuse (its
// options are invalid; Session.Send passes them unchecked) does not stop
// a batch start it waits behind: the calls all start, and the run goes
// on. Before, the batch settled the calls left as interrupted and waited
// for the abort to end it, which refused it: the session stayed in
// executing_tools with nothing running.
func TestRefusedAbortStopsNoBatch(t *testing.T) {
	const calls = 3
	gate := &gatePlugin{first: make(chan struct{}), release: make(chan struct{})}
	env := &Env{}
	env.PluginBudget = time.Minute
	sys := newSystem(t)
	script := `{"turns":[{"tool_calls":[` + strings.TrimSuffix(strings.Repeat(`{"name":"echo","args":{"text":"x"}},`, calls), ",") + `]},{"text":"done"}]}`
	h := spawnSpec(t, sys, newPlace(sys, env, nil), Spec{ID: "s1", Model: scriptModel(t, "", script), Tools: demoSet(t),
		Plugins: []plugins.Plugin{gate}})
	h.ok(&eventsv1.Prompt{Text: "go"})
	<-gate.first
	refused := h.sys.Root.RequestFuture(h.pid, &eventsv1.Abort{At: "soon"}, wait)
	close(gate.release)
	if res, err := refused.Result(); err != nil || res.(*eventsv1.Reply).GetError().GetCode() != events.CodeBadRequest {
		t.Fatalf("the abort: %v, %v; want bad_request", res, err)
	}
	if r := h.waitFor("agent_end", 1).GetAgentEnd().Reason; r != string(events.EndCompleted) {
		t.Errorf("agent_end reason %s, want completed", r)
	}
	if n := gate.asked.Load(); n != calls {
		t.Errorf("the plugin was asked about %d calls, want %d", n, calls)
	}
}
