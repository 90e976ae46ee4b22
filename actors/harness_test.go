package actors

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
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
	reg *Registry
	pid *actor.PID
	rec *eventstest.Recorder
}

// newHarness starts a session on the scripted model scriptJSON with the
// demo tools plus extra.
func newHarness(t testing.TB, scriptJSON string, env *Env, extra ...tools.Tool) *harness {
	t.Helper()
	if env == nil {
		env = &Env{}
	}
	model, err := script.NewResolver("").Resolve("", json.RawMessage(scriptJSON))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	set, err := tools.NewSet(append(builtin.Demo(), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	h := &harness{t: t, sys: sys, reg: NewRegistry(sys, env), rec: eventstest.NewRecorder()}
	h.pid, err = h.reg.Spawn(Spec{ID: "s1", Model: model, System: "be brief", Tools: set})
	if err != nil {
		t.Fatal(err)
	}
	h.ok(&SubscribeSink{Sink: h.rec, Since: 0, Filter: events.Filter{}})
	t.Cleanup(func() {
		h.reg.CloseAll()
		sys.Shutdown()
	})
	return h
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

// state returns get_state.
func (h *harness) state() *eventsv1.SessionState {
	h.t.Helper()
	return h.ok(&eventsv1.GetState{}).GetState()
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

// expect asserts the exact sequence of event types recorded so far.
func (h *harness) expect(want ...string) {
	h.t.Helper()
	eventstest.ExpectTypes(h.t, h.rec.Events(), want...)
}

// contents lists role:content of msgs, for compact assertions.
func contents(msgs []*llm.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ":" + m.Content
	}
	return out
}
