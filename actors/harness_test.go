package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

// wait bounds every wait of these tests: generous, so a loaded CI machine
// does not flake; a passing test never waits this long.
const wait = 10 * time.Second

// harness runs one session actor with an inline script, recording every
// event from seq 1.
type harness struct {
	t   testing.TB
	sys *actor.ActorSystem
	reg *testPlace
	pid *actor.PID
	rec *eventstest.Recorder
}

// newHarness starts a session on the scripted model scriptJSON with the
// demo tools plus extra.
func newHarness(t testing.TB, scriptJSON string, env *Env, extra ...tools.Tool) *harness {
	t.Helper()
	return newHarnessModel(t, scriptModel(t, "", scriptJSON), env, extra...)
}

// newHarnessModel starts a session on model, in an actor system of its own,
// with the demo tools plus extra.
func newHarnessModel(t testing.TB, model *llm.Model, env *Env, extra ...tools.Tool) *harness {
	t.Helper()
	if env == nil {
		env = &Env{}
	}
	sys := newSystem(t)
	return spawnHarness(t, sys, newPlace(sys, env, nil), "s1", model, demoSet(t, extra...))
}

// newSystem returns an actor system that is shut down when t ends. Late
// reports to a closed session become dead letters; a short throttle
// interval lets protoactor's throttle goroutine end before goleak looks.
func newSystem(t testing.TB) *actor.ActorSystem {
	sys := actor.NewActorSystem(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }),
		actor.WithDeadLetterThrottleInterval(time.Millisecond))
	t.Cleanup(sys.Shutdown)
	return sys
}

// spawnHarness starts session id in reg and records its events from seq 1;
// the session is closed when t ends. Many harnesses can share a system.
func spawnHarness(t testing.TB, sys *actor.ActorSystem, reg *testPlace, id string, model *llm.Model, set *tools.Set) *harness {
	t.Helper()
	return spawnSpec(t, sys, reg, Spec{ID: id, Model: model, Tools: set, Stored: &spec.Session{System: "be brief"}})
}

// spawnSpec starts the session spec describes and records its events from
// seq 1; the session is closed when t ends.
func spawnSpec(t testing.TB, sys *actor.ActorSystem, reg *testPlace, spec Spec) *harness {
	t.Helper()
	id := spec.ID
	h := &harness{t: t, sys: sys, reg: reg, rec: eventstest.NewRecorder()}
	var err error
	h.pid, err = reg.Spawn(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close(id) })
	h.ok(&SubscribeSink{Sink: h.rec, Since: 0, Filter: events.Filter{}, Buffered: spec.Restore != nil})
	return h
}

// scriptModel resolves an inline script as the model called name
// (script:inline when name is "").
func scriptModel(t testing.TB, name, scriptJSON string) *llm.Model {
	t.Helper()
	model, err := script.NewResolver("").Resolve(name, json.RawMessage(scriptJSON))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	return model
}

// demoSet returns the demo tools plus extra.
func demoSet(t testing.TB, extra ...tools.Tool) *tools.Set {
	t.Helper()
	set, err := tools.NewSet(append(builtin.Demo(), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// send sends a command and returns the reply.
func (h *harness) send(cmd any) *eventsv1.Reply {
	h.t.Helper()
	res, err := h.sys.Root.RequestFuture(h.pid, cmd, wait).Result()
	if err != nil {
		h.t.Fatalf("%T: %v", cmd, err)
	}
	return res.(*eventsv1.Reply)
}

// ok sends a command that must succeed.
func (h *harness) ok(cmd any) *eventsv1.Reply {
	h.t.Helper()
	r := h.send(cmd)
	if r.Error != nil {
		h.t.Fatalf("%T failed: %s: %s", cmd, r.Error.Code, r.Error.Message)
	}
	return r
}

// fails sends a command that must fail with code.
func (h *harness) fails(cmd any, code string) {
	h.t.Helper()
	r := h.send(cmd)
	if r.GetError().GetCode() != code {
		h.t.Fatalf("%T: got error %v, want code %s", cmd, r.Error, code)
	}
}

// waitFor waits for the n-th event of type name (n from 1).
func (h *harness) waitFor(name string, n int) *eventsv1.Event {
	h.t.Helper()
	return h.rec.WaitForNth(h.t, n, eventstest.IsType(name), wait)
}

// waitState waits until the session has entered state to for the n-th time.
func (h *harness) waitState(to string, n int) {
	h.t.Helper()
	h.rec.WaitForNth(h.t, n, func(ev *eventsv1.Event) bool {
		return ev.GetStateChanged().GetTo() == to
	}, wait)
}

// drained is a report, posted by a test: the session answers it, as any
// message that is not a command, with bad_request, once it has run every
// report posted before it (reports wait behind commands, in order).
type drained struct{}

func (*drained) report() {}

// drain waits until the session has run every report posted to it so
// far: a test that posts reports itself (h.sys.Root.Send) and then asks
// get_state would have its command overtake them.
func (h *harness) drain() {
	h.t.Helper()
	res, err := h.sys.Root.RequestFuture(h.pid, &drained{}, wait).Result()
	if r, ok := res.(*eventsv1.Reply); err != nil || !ok || r.GetError().GetCode() != events.CodeBadRequest {
		h.t.Fatalf("drain: %v, %v", res, err)
	}
}

// state returns get_state.
func (h *harness) state() *eventsv1.SessionState {
	h.t.Helper()
	return h.ok(&eventsv1.GetState{}).GetState()
}

// messages returns the committed messages as they are; mid-batch they
// may end with tool calls still open.
func (h *harness) messages() []*llm.Message {
	h.t.Helper()
	return h.ok(&eventsv1.GetMessages{}).GetMessages().GetMessages()
}

// history returns the committed messages, checked against the invariant.
func (h *harness) history() []*llm.Message {
	h.t.Helper()
	msgs := h.ok(&eventsv1.GetMessages{}).GetMessages().GetMessages()
	if err := llm.Validate(msgs); err != nil {
		h.t.Fatalf("invalid history: %v", err)
	}
	return msgs
}

// expect asserts the exact sequence of event types recorded so far and
// reports whether it matched.
func (h *harness) expect(want ...string) bool {
	h.t.Helper()
	return eventstest.ExpectTypes(h.t, h.rec.Events(), want...)
}

// contents lists role:content of msgs, for compact assertions.
func contents(msgs []*llm.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ":" + m.Content
	}
	return out
}

// since returns the events recorded after the first n.
func (h *harness) since(n int) []*eventsv1.Event {
	return h.rec.Events()[n:]
}

// waitMatch waits for the first event that pred matches.
func (h *harness) waitMatch(pred eventstest.Pred) *eventsv1.Event {
	h.t.Helper()
	return h.rec.WaitFor(h.t, pred, wait)
}

// waitToolEnd waits for the end of tool call callID.
func (h *harness) waitToolEnd(callID string) *eventsv1.Event {
	h.t.Helper()
	return h.waitMatch(func(ev *eventsv1.Event) bool {
		return ev.GetToolExecutionEnd().GetCallId() == callID
	})
}

// waitRunEnd waits for the agent_end of run runID.
func (h *harness) waitRunEnd(runID string) *eventsv1.Event {
	h.t.Helper()
	return h.waitMatch(func(ev *eventsv1.Event) bool {
		return ev.GetAgentEnd().GetRunId() == runID
	})
}

// gate holds a model request or a tool until the test opens it, so that
// a test decides when a busy state ends instead of racing a timer.
type gate chan struct{}

func newGate() gate { return make(gate) }

// open lets everything the gate holds go on, now and later; opening an
// open gate does nothing.
func (g gate) open() {
	select {
	case <-g:
	default:
		close(g)
	}
}

// wait returns once the gate is open, or ctx's error once ctx is done.
func (g gate) wait(ctx context.Context) error {
	select {
	case <-g:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// heldProvider holds requests until its gate opens: before the request
// when at is 0 (the session stays running), else right after the at-th
// chunk (the session is streaming). The first pass requests go through
// unheld. Cancelling a request releases it with ctx's error; a request
// cancelled while held before it starts takes no turn of the script.
type heldProvider struct {
	llm.Provider
	gate gate
	at   int
	pass atomic.Int32
}

func (p *heldProvider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	if p.pass.Add(-1) >= 0 {
		return p.Provider.Stream(ctx, req, emit)
	}
	if p.at == 0 {
		if err := p.gate.wait(ctx); err != nil {
			return nil, err
		}
	}
	n := 0
	return p.Provider.Stream(ctx, req, func(c llm.Chunk) {
		emit(c)
		if n++; n == p.at {
			_ = p.gate.wait(ctx) // on cancellation the script stops at its next step
		}
	})
}

// held returns the scripted model scriptJSON (called name) with its
// requests held by g at chunk at (see heldProvider).
func held(t testing.TB, name, scriptJSON string, g gate, at int) *llm.Model {
	t.Helper()
	return heldAfter(t, name, scriptJSON, g, at, 0)
}

// heldAfter is held for all requests but the first pass.
func heldAfter(t testing.TB, name, scriptJSON string, g gate, at, pass int) *llm.Model {
	t.Helper()
	m := scriptModel(t, name, scriptJSON)
	p := &heldProvider{Provider: m.Provider, gate: g, at: at}
	p.pass.Store(int32(pass))
	m.Provider = p
	return m
}

// holdTool returns a tool called name of kind that runs until g opens
// (answering "<name> done") or its call is cancelled.
func holdTool(name string, kind tools.Kind, g gate) tools.Tool {
	return tools.Define(tools.Spec{Name: name, Description: "Wait for the test.", Kind: kind},
		func(ctx context.Context, _ json.RawMessage, _ func(string)) (string, error) {
			if err := g.wait(ctx); err != nil {
				return "", err
			}
			return name + " done", nil
		})
}

// pollState polls get_state every few milliseconds until ok accepts it,
// failing after wait. It is for what no event announces (abandoned tools).
func (h *harness) pollState(what string, ok func(*eventsv1.SessionState) bool) *eventsv1.SessionState {
	h.t.Helper()
	return eventually.Value(h.t, wait, func() (*eventsv1.SessionState, error) {
		st := h.state()
		if !ok(st) {
			return nil, fmt.Errorf("get_state never showed %s; last: %v", what, st)
		}
		return st, nil
	})
}

// findType returns the first event of type name in evs, or nil.
func findType(evs []*eventsv1.Event, name string) *eventsv1.Event {
	for _, ev := range evs {
		if events.Type(ev) == name {
			return ev
		}
	}
	return nil
}

// checkLog fails t for each problem logProblems finds in a whole log.
func checkLog(t testing.TB, evs []*eventsv1.Event) {
	t.Helper()
	for _, p := range logProblems(evs) {
		t.Error(p)
	}
}

// logProblems checks what must hold of every session's event log, read
// from seq 1: seq numbers are 1..N with no gap; runs do not overlap and
// every agent_end closes the run in progress, exactly once; state_changed
// events chain from idle; agent_abort names the run in progress (none in
// idle); no internal error was reported.
func logProblems(evs []*eventsv1.Event) []string {
	var out []string
	run, state := "", "idle"
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			out = append(out, fmt.Sprintf("event %d (%s) has seq %d", i+1, events.Type(ev), ev.Seq))
		}
		switch {
		case ev.GetAgentStart() != nil:
			if run != "" {
				out = append(out, fmt.Sprintf("seq %d: agent_start %s while run %s is in progress", ev.Seq, ev.GetAgentStart().RunId, run))
			}
			run = ev.GetAgentStart().RunId
		case ev.GetAgentEnd() != nil:
			if id := ev.GetAgentEnd().RunId; id != run {
				out = append(out, fmt.Sprintf("seq %d: agent_end %s, but the run in progress is %q", ev.Seq, id, run))
			}
			run = ""
		case ev.GetAgentAbort() != nil:
			if got := ev.GetAgentAbort().GetRunId(); got != run {
				out = append(out, fmt.Sprintf("seq %d: agent_abort names run %q, but the run in progress is %q", ev.Seq, got, run))
			}
		case ev.GetStateChanged() != nil:
			sc := ev.GetStateChanged()
			if sc.From != state {
				out = append(out, fmt.Sprintf("seq %d: state_changed from %s, but the state was %s", ev.Seq, sc.From, state))
			}
			state = sc.To
		case ev.GetError() != nil:
			if ev.GetError().Code == events.CodeInternal {
				out = append(out, fmt.Sprintf("seq %d: internal error: %s", ev.Seq, ev.GetError().Message))
			}
		}
	}
	if (run == "") != (state == "idle") {
		out = append(out, fmt.Sprintf("the log ends in state %s with run %q in progress", state, run))
	}
	return out
}
