package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/approval"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// gatedStore holds every Apply until the test lets it through, or fails
// it; entered, when set, is told of each Apply as it starts.
type gatedStore struct {
	store.Store
	pass    chan struct{}
	fail    error
	entered chan struct{}
}

func (g *gatedStore) Apply(ctx context.Context, id string, b *store.Batch) error {
	if g.entered != nil {
		select {
		case g.entered <- struct{}{}:
		default:
		}
	}
	if g.fail != nil {
		return g.fail
	}
	if g.pass != nil {
		<-g.pass
	}
	return g.Store.Apply(ctx, id, b)
}

// storedHarness starts session s1 backed by st (created in it first).
func storedHarness(t *testing.T, st store.Store, spec Spec) *harness {
	t.Helper()
	return storedHarnessWith(t, st, spec, Settings{})
}

// storedHarnessWith is storedHarness with settings (its Store and Node
// are set here).
func storedHarnessWith(t *testing.T, st store.Store, spec Spec, settings Settings) *harness {
	t.Helper()
	if err := st.Create(context.Background(), "s1", store.Config{Model: spec.Model.Name}); err != nil && !errors.Is(err, store.ErrExists) {
		t.Fatal(err)
	}
	if err := st.Acquire(context.Background(), "s1", "n1", time.Minute); err != nil {
		t.Fatal(err)
	}
	sys := newSystem(t)
	spec.ID = "s1"
	settings.Store, settings.Node = st, "n1"
	reg := newPlace(sys, &Env{Settings: settings}, nil)
	t.Cleanup(reg.Shutdown)
	return spawnSpec(t, sys, reg, spec)
}

// TestDurableBeforeVisible: nothing of a run — its start, the prompt,
// message_committed, the prompt's reply — reaches anyone before the store
// holds the prompt and the run.
func TestDurableBeforeVisible(t *testing.T) {
	mem := memory.New()
	g := &gatedStore{Store: mem, pass: make(chan struct{}), entered: make(chan struct{}, 1)}
	h := storedHarness(t, g, Spec{Model: scriptModel(t, "", `{"turns":[{"text":"hi"}]}`), Tools: demoSet(t)})
	reply := h.sys.Root.RequestFuture(h.pid, &eventsv1.Prompt{Text: "hello"}, wait)
	<-g.entered
	if got := h.rec.Types(); !slices.Equal(got, []string{"session_created"}) {
		t.Fatalf("told %v before the store held the prompt", got)
	}
	if snap, _ := mem.Load(context.Background(), "s1"); len(snap.Messages) != 0 {
		t.Fatal("the store already holds the message")
	}
	close(g.pass)
	if _, err := reply.Result(); err != nil {
		t.Fatal(err)
	}
	h.waitFor("agent_end", 1)
	snap, err := mem.Load(context.Background(), "s1")
	if err != nil || len(snap.Messages) != 2 || snap.State != "idle" {
		t.Fatalf("stored %v, %v", snap, err)
	}
	for _, ev := range eventsOf(h, "message_committed") {
		if i := ev.GetMessageCommitted().Index; int(i) >= len(snap.Messages) {
			t.Fatalf("message %d was told but is not stored", i)
		}
	}
	checkLog(t, h.rec.Events())
}

// TestStoreFailureEndsTheRun: a write that fails for good is reported,
// the prompt whose change it held is refused (store_failed), the run it
// started is never told, and the session keeps answering.
func TestStoreFailureEndsTheRun(t *testing.T) {
	g := &gatedStore{Store: memory.New(), fail: errors.New("disk full")}
	h := storedHarness(t, g, Spec{Model: scriptModel(t, "", `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":20000}}]}]}`), Tools: demoSet(t)})
	h.fails(&eventsv1.Prompt{Text: "hello"}, "store_failed")
	if e := h.waitFor("error", 1).GetError(); e.Code != "store_failed" {
		t.Fatalf("error %v", e)
	}
	h.expect("session_created", "error")
	checkLog(t, h.rec.Events())
	if st := h.state(); st.State != "idle" || st.MessageCount != 0 || st.RunId != nil {
		t.Fatalf("state %v", st)
	}
}

// TestRestoreInterruptedRun: a session stored mid-batch comes back idle
// with a valid history, its queue, and agent_recovered.
func TestRestoreInterruptedRun(t *testing.T) {
	mem := memory.New()
	ctx := context.Background()
	if err := mem.Create(ctx, "s1", store.Config{Model: "script:inline"}); err != nil {
		t.Fatal(err)
	}
	call := func(id string) *llm.ToolCall {
		return &llm.ToolCall{Id: id, Name: "echo", Args: &eventsv1.RawJSON{Json: []byte(`{"text":"x"}`)}}
	}
	assistant := llm.AssistantMessage("two calls")
	assistant.ToolCalls = []*llm.ToolCall{call("c-1"), call("c-2")}
	history := []*llm.Message{llm.UserMessage("go"), assistant, llm.ToolResultMessage("c-1", "x", false)}
	if err := mem.Apply(ctx, "s1", &store.Batch{Messages: history, State: "executing_tools", EventSeq: 40,
		Volatile: &store.Volatile{PromptQueue: []string{"later"}, RunID: "r-3", Counters: store.Counters{Runs: 3}}}); err != nil {
		t.Fatal(err)
	}
	snap, err := mem.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	h := storedHarness(t, mem, Spec{Model: scriptModel(t, "", `{"turns":[{"text":"again"}]}`), Tools: demoSet(t), Restore: snap})
	h.waitFor("agent_end", 1)
	h.expect("agent_recovered", "message_committed", "agent_end")
	rec := h.waitFor("agent_recovered", 1)
	if r := rec.GetAgentRecovered(); r.FromState != "executing_tools" || r.InterruptedCalls != 1 || r.GetRunId() != "r-3" || r.Resumed {
		t.Fatalf("agent_recovered %v", r)
	}
	if rec.Seq <= 40 {
		t.Fatalf("restored numbering starts at %d, at or before the stored 40", rec.Seq)
	}
	msgs := h.history()
	if last := msgs[len(msgs)-1]; last.ToolCallId != "c-2" || last.Content != "interrupted: process restarted" {
		t.Fatalf("repaired result %v", last)
	}
	if st := h.state(); st.State != "idle" || !slices.Equal(st.PromptQueue, []string{"later"}) {
		t.Fatalf("state %v", st)
	}
	h.ok(&eventsv1.Prompt{Text: "next"})
	if run := h.waitFor("agent_start", 1).GetAgentStart().RunId; run != "r-4" {
		t.Fatalf("the next run is %s; run ids must not repeat across restarts", run)
	}
}

// TestRestorePendingApproval: an approval pending at the crash is pending
// again after the restore, and approving it takes the run up.
func TestRestorePendingApproval(t *testing.T) {
	mem := memory.New()
	// The restored process's model answers the next request: a scripted
	// model starts its script over in a new process.
	spec := func(restore *store.Snapshot) Spec {
		script := `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"ok"}}]}]}`
		if restore != nil {
			script = `{"turns":[{"text":"done"}]}`
		}
		return Spec{Model: scriptModel(t, "", script),
			Tools: demoSet(t), Plugins: []plugins.Plugin{plugin(t, approval.New, `{"tools":["echo"]}`)}, Restore: restore}
	}
	first := storedHarness(t, mem, spec(nil))
	first.ok(&eventsv1.Prompt{Text: "go"})
	id := first.waitFor("approval_required", 1).GetApprovalRequired().ApprovalId
	first.waitState("idle", 1)
	waitStored(t, mem, func(s *store.Snapshot) bool { return len(s.Volatile.Approvals) == 1 })
	first.reg.Close("s1") // the process "dies"; its store has what it told

	snap, err := mem.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	h := storedHarness(t, mem, spec(snap))
	rec := h.waitFor("agent_recovered", 1).GetAgentRecovered()
	if !rec.Resumed || rec.InterruptedCalls != 0 {
		t.Fatalf("agent_recovered %v", rec)
	}
	if st := h.state(); st.State != "idle" || len(st.PendingApprovals) != 1 || st.PendingApprovals[0].ApprovalId != id {
		t.Fatalf("state %v", st)
	}
	h.ok(&eventsv1.Approve{ApprovalId: id})
	h.waitFor("agent_end", 1)
	if got := contents(h.history()); got[2] != "tool:ok" {
		t.Fatalf("history %q", got)
	}
}

// TestHeldCallKeepsTheBatchInOrder: the model lists c-1 (held for an
// approval) then c-2, which comes back while c-1 waits. The history takes
// the batch's results in the model's order — c-1's, then c-2's — and c-2's
// waits in the store's volatile state, so a restart meanwhile keeps it.
// c-2's result was committed first, at the pause, before.
func TestHeldCallKeepsTheBatchInOrder(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			mem := memory.New()
			spec := func(restore *store.Snapshot) Spec {
				script := `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"held"}},{"name":"echo","args":{"text":"free"}}]},{"text":"done"}]}`
				if restore != nil {
					script = `{"turns":[{"text":"done"}]}`
				}
				return Spec{Model: scriptModel(t, "", script), Tools: demoSet(t), Restore: restore,
					Plugins: []plugins.Plugin{plugin(t, approval.New, `{"tools":["echo"],"safe_commands":[]}`)}}
			}
			h := storedHarness(t, mem, spec(nil))
			h.ok(&eventsv1.Prompt{Text: "go"})
			first := h.waitFor("approval_required", 1).GetApprovalRequired()
			h.waitState("idle", 1) // both held
			h.ok(&eventsv1.Approve{ApprovalId: h.waitFor("approval_required", 2).GetApprovalRequired().ApprovalId})
			h.waitState("idle", 2) // c-2 ran, c-1 still held
			if got := contents(h.ok(&eventsv1.GetMessages{}).GetMessages().GetMessages()); len(got) != 2 {
				t.Fatalf("while c-1 waits the history is %q: c-2's result went in before c-1's", got)
			}
			waitStored(t, mem, func(s *store.Snapshot) bool { return len(s.Volatile.Settled) == 1 && len(s.Messages) == 2 })
			if restart {
				h.reg.Close("s1")
				snap, err := mem.Load(context.Background(), "s1")
				if err != nil {
					t.Fatal(err)
				}
				h = storedHarness(t, mem, spec(snap))
				if rec := h.waitFor("agent_recovered", 1).GetAgentRecovered(); !rec.Resumed || rec.InterruptedCalls != 0 {
					t.Fatalf("agent_recovered %v", rec)
				}
			}
			h.ok(&eventsv1.Approve{ApprovalId: first.ApprovalId})
			h.waitFor("agent_end", 1)
			got := contents(h.history())
			if want := []string{"user:go", "assistant:", "tool:held", "tool:free", "assistant:done"}; !slices.Equal(got, want) {
				t.Fatalf("history %q, want %q", got, want)
			}
			if msgs := h.history(); msgs[2].ToolCallId != first.CallId {
				t.Fatalf("the first result answers %s, want %s", msgs[2].ToolCallId, first.CallId)
			}
		})
	}
}

// waitStored polls the store until ok holds (writes are asynchronous).
func waitStored(t *testing.T, st store.Store, ok func(*store.Snapshot) bool) {
	t.Helper()
	eventually.Within(t, wait, func() error {
		if snap, err := st.Load(context.Background(), "s1"); err != nil || !ok(snap) {
			return fmt.Errorf("the store never reached the expected state (load error %v)", err)
		}
		return nil
	})
}

// TestIdleSessionTrimsItsEvents: a session idle for IdleTrim keeps only
// its newest IdleKeep events for replay.
func TestIdleSessionTrimsItsEvents(t *testing.T) {
	h := newHarness(t, `{"turns":[{"text":"a long enough answer","chunk_size":1}]}`, &Env{Settings: Settings{IdleTrim: 20 * time.Millisecond, IdleKeep: 4}})
	h.ok(&eventsv1.Prompt{Text: "go"})
	last := h.waitFor("agent_end", 1).Seq
	eventually.Within(t, wait, func() error {
		evs := h.ok(&eventsv1.Subscribe{Since: 0}).GetEvents().GetEvents()
		if len(evs) == 5 && evs[0].GetEventsLost() != nil && evs[4].Seq == last {
			return nil // events_lost, then the newest four
		}
		return fmt.Errorf("the buffer still holds %d events", len(evs))
	})
}

// TestRestoreKeepsTheContextUse: get_state's context reads the same once
// the session is restored; it read 0 until its next request before.
func TestRestoreKeepsTheContextUse(t *testing.T) {
	mem := memory.New()
	script := `{"context_window":1000,"turns":[{"text":"hi","usage":{"input_tokens":400,"output_tokens":5}}]}`
	first := storedHarness(t, mem, Spec{Model: scriptModel(t, "", script), Tools: demoSet(t)})
	first.ok(&eventsv1.Prompt{Text: "go"})
	first.waitFor("agent_end", 1)
	before := first.state().GetContext()
	if before.GetUsed() != 400 || before.GetPercent() != 40 {
		t.Fatalf("context before %v", before)
	}
	waitStored(t, mem, func(s *store.Snapshot) bool { return s.Volatile.ContextUsed == 400 })
	first.reg.Close("s1")
	snap, err := mem.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	h := storedHarness(t, mem, Spec{Model: scriptModel(t, "", script), Tools: demoSet(t), Restore: snap})
	if after := h.state().GetContext(); !proto.Equal(after, before) {
		t.Fatalf("context after the restore %v, want %v", after, before)
	}
}

// TestRestoredRejectionStillEndsTheRun: c-2 of a paused batch is rejected
// (without auto_resume: the run is to end once the batch is done) while
// c-1 still waits; after a restart, approving c-1 ends the run rejected,
// with no further model turn. The restore forgot the rejection before,
// and the model was called again.
func TestRestoredRejectionStillEndsTheRun(t *testing.T) {
	mem := memory.New()
	spec := func(restore *store.Snapshot) Spec {
		script := `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"one"}},{"name":"echo","args":{"text":"two"}}]},{"text":"done"}]}`
		if restore != nil {
			script = `{"turns":[{"text":"done"}]}`
		}
		return Spec{Model: scriptModel(t, "", script), Tools: demoSet(t), Restore: restore,
			Plugins: []plugins.Plugin{plugin(t, approval.New, `{"tools":["echo"]}`)}}
	}
	h := storedHarness(t, mem, spec(nil))
	h.ok(&eventsv1.Prompt{Text: "go"})
	first := h.waitFor("approval_required", 1).GetApprovalRequired()
	h.ok(&eventsv1.Reject{ApprovalId: h.waitFor("approval_required", 2).GetApprovalRequired().ApprovalId})
	waitStored(t, mem, func(s *store.Snapshot) bool { return s.Volatile.RunEnd == "rejected" && len(s.Volatile.Settled) == 1 })
	h.reg.Close("s1")
	snap, err := mem.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	h = storedHarness(t, mem, spec(snap))
	h.waitFor("agent_recovered", 1)
	h.ok(&eventsv1.Approve{ApprovalId: first.ApprovalId})
	if end := h.waitFor("agent_end", 1).GetAgentEnd(); end.Reason != "rejected" {
		t.Fatalf("agent_end %v, want rejected", end)
	}
	got := contents(h.history())
	if want := []string{"user:go", "assistant:", "tool:one", "tool:rejected: rejected by the user"}; !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
}
