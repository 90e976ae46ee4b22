package actors

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors/history"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/storetest"
	"github.com/tack-run/tack/tools"
)

// The conversation-control cells of the paused states (a run waiting for
// an approval or a question: the session is idle, the run is not over)
// and of a stubborn tool running.

// pausedScript: a turn calling echo, which a plugin holds, then answers.
const pausedScript = `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"x"}}]},{"text":"A2"}],"when_exhausted":"repeat_last"}`

// pausedCell starts a run that pauses on its echo call: for an approval
// (ap-1) or, with question, a question (q-1).
func pausedCell(t *testing.T, question bool) *harness {
	t.Helper()
	act := plugins.Action{Kind: plugins.HoldForApproval}
	wait := "approval_required"
	if question {
		act, wait = plugins.Action{Kind: plugins.Ask, Text: "sure?"}, "ask_user"
	}
	h := newPluginHarness(t, pausedScript, nil, &oncePlugin{hook: plugins.BeforeTool, act: act})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor(wait, 1)
	h.waitFor("agent_status", 3) // thinking, tool_calling, idle: paused
	if st := h.state(); st.State != "idle" || st.GetRunId() != "r-1" {
		t.Fatalf("not paused: %v", st)
	}
	return h
}

func TestControlPaused(t *testing.T) {
	superseded := "tool:" + tools.RejectedPrefix + string(events.ApprovalSuperseded)
	aborted := "tool:" + tools.RejectedPrefix + "aborted"
	for _, question := range []bool{false, true} {
		pending := "approval"
		if question {
			pending = "question"
		}
		// A question is answered by nothing but respond: superseding
		// or aborting commits its call as rejected, without an
		// approval_resolved.
		resolved := one("approval_resolved")
		if question {
			resolved = nil
		}
		// endPaused: the paused run ends from idle (no state change).
		endPaused := seq(resolved, one("tool_execution_end", "tool_execution_metrics", "message_committed", "turn_end", "agent_end"))
		for _, ifBusy := range ifBusyValues {
			t.Run(pending+"/if_busy="+ifBusy, func(t *testing.T) {
				h := pausedCell(t, question)
				mark := h.rec.Len()
				r := h.send(&eventsv1.Prompt{Text: "p", IfBusy: ifBusy})
				if ifBusy == string(events.IfBusyReject) {
					if r.GetError().GetCode() != events.CodeBusy {
						t.Fatalf("reply %v, want busy", r)
					}
					expectLabelled(t, "after the command", h.since(mark), nil)
					if st := h.state(); st.State != "idle" || st.GetRunId() != "r-1" {
						t.Errorf("no longer paused: %v", st)
					}
					return
				}
				promptQueued(false)(t, r)
				h.waitRunEnd("r-2")
				expectLabelled(t, "up to idle", h.since(mark), seq(endPaused, runStart, answer, runEnd))
				want := []string{"user:go", "assistant:", superseded, "user:p", "assistant:A2"}
				if ifBusy == string(events.IfBusyRollback) {
					want = want[3:]
					checkRolledBack(t, h, 3)
				}
				if got := contents(h.history()); !slices.Equal(got, want) {
					t.Errorf("history = %q, want %q", got, want)
				}
				if end := findType(h.since(mark), "agent_end").GetAgentEnd(); end.GetReason() != string(events.EndSuperseded) {
					t.Errorf("the paused run's end = %v", end)
				}
			})
		}
		for _, at := range []string{string(events.AtNow), string(events.AtAfterResponse), string(events.AtAfterTools)} {
			for _, rollback := range []bool{false, true} {
				name := pending + "/abort_at=" + at
				if rollback {
					name += ",rollback"
				}
				t.Run(name, func(t *testing.T) {
					h := pausedCell(t, question)
					mark := h.rec.Len()
					if r := h.send(&eventsv1.Abort{At: at, Rollback: rollback, TimeoutMs: 60000}); r.Error != nil {
						t.Fatal(r.Error)
					}
					// Nothing is in flight: the abort acts now. (get_state
					// is answered once the abort's handler is done.)
					st := h.state()
					expectLabelled(t, "after the command", h.since(mark), seq(one("agent_abort"), endPaused))
					want := []string{"user:go", "assistant:", aborted}
					if rollback {
						want = []string{}
						checkRolledBack(t, h, 3)
					}
					if got := contents(h.history()); !slices.Equal(got, want) {
						t.Errorf("history = %q, want %q", got, want)
					}
					if st.State != "idle" || st.RunId != nil || len(st.PendingApprovals) != 0 || st.PendingQuestion != nil {
						t.Errorf("get_state = %v", st)
					}
				})
			}
		}
	}
}

// TestControlStubborn: a tool that ignores cancellation does not hold up
// an interrupting prompt: it is abandoned at once and the new run starts.
func TestControlStubborn(t *testing.T) {
	for _, ifBusy := range []string{string(events.IfBusyInterrupt), string(events.IfBusyRollback)} {
		t.Run(ifBusy, func(t *testing.T) {
			h := newHarness(t, `{"turns":[{"tool_calls":[{"name":"sleep_stubborn","args":{"ms":200}}]},{"text":"A2"}]}`, &Env{Settings: Settings{ToolGrace: 10}})
			h.ok(&eventsv1.Prompt{Text: "go"})
			h.waitFor("tool_execution_start", 1)
			mark := h.rec.Len()
			promptQueued(false)(t, h.send(&eventsv1.Prompt{Text: "p", IfBusy: ifBusy}))
			h.waitRunEnd("r-2")
			expectLabelled(t, "up to idle", h.since(mark), seq(one("agent_abort", "tool_killed"), toolEnd,
				one("message_committed", "turn_end"), abortEnd, runStart, answer, runEnd))
			want := []string{"user:go", "assistant:", "tool:" + tools.InterruptedByAbort, "user:p", "assistant:A2"}
			if ifBusy == string(events.IfBusyRollback) {
				want = want[3:]
			}
			if got := contents(h.history()); !slices.Equal(got, want) {
				t.Errorf("history = %q, want %q", got, want)
			}
		})
	}
}

// TestControlRollbackStored: with a store, a rollback that leaves fewer
// messages than were stored, followed by new ones, is written as one
// rewrite: the store holds the rolled-back messages marked, in their
// place, then the new run's, and a restore splits them again.
func TestControlRollbackStored(t *testing.T) {
	mem := memory.New()
	gates := map[string]gate{"hold": newGate(), "hold_immune": newGate()}
	set := demoSet(t, holdTool("hold", tools.Killable, gates["hold"]), holdTool("hold_immune", tools.Immune, gates["hold_immune"]))
	h := storedHarness(t, mem, Spec{Model: scriptModel(t, "", tableTools), Tools: set})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("tool_execution_start", 2)
	promptQueued(true)(t, h.send(&eventsv1.Prompt{Text: "p", IfBusy: string(events.IfBusyRollback)}))
	gates["hold_immune"].open()
	h.waitRunEnd("r-2")
	want := []string{"user:go", "assistant:", "tool:" + tools.InterruptedByAbort, "tool:hold_immune done", "user:p", "assistant:A2"}
	all := h.ok(&eventsv1.GetMessages{All: true}).GetMessages().GetMessages()
	if got := contents(all); !slices.Equal(got, want) {
		t.Fatalf("all messages = %q, want %q", got, want)
	}
	snap, err := mem.Load(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var marks []bool
	for _, m := range snap.Messages {
		marks = append(marks, m.RolledBack)
	}
	if got := contents(snap.Messages); !slices.Equal(got, want) || !slices.Equal(marks, []bool{true, true, true, true, false, false}) {
		t.Fatalf("stored %q, rolled back %v", got, marks)
	}
	restored := history.Restore(snap.Messages, 0)
	if got, all := contents(restored.Messages()), contents(restored.All()); !slices.Equal(got, want[4:]) || !slices.Equal(all, want) {
		t.Errorf("restored: working history %q, all %q", got, all)
	}
}

// failingStore fails every Apply while fail is set.
type failingStore struct {
	store.Store
	fail atomic.Bool
}

func (f *failingStore) Apply(ctx context.Context, id string, b *store.Batch) error {
	if f.fail.Load() {
		return errors.New("disk full")
	}
	return f.Store.Apply(ctx, id, b)
}

// TestControlRollbackStoreFails: a rollback whose write fails for good is
// undone with the rest of what the write held: the session goes back to
// the history the store has, nothing marked rolled back.
func TestControlRollbackStoreFails(t *testing.T) {
	fs := &failingStore{Store: memory.New()}
	g := newGate()
	h := storedHarness(t, fs, Spec{Model: held(t, "", `{"turns":[{"text":"abcd"}]}`, g, 0), Tools: demoSet(t)})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("request_start", 1) // the prompt is stored: its events are out
	fs.fail.Store(true)
	h.ok(&eventsv1.Abort{Rollback: true})
	if e := h.waitFor("error", 1).GetError(); e.Code != codeStoreFailed {
		t.Fatalf("error %v", e)
	}
	want := []string{"user:go"}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	all := h.ok(&eventsv1.GetMessages{All: true}).GetMessages().GetMessages()
	if len(all) != 1 || all[0].RolledBack {
		t.Errorf("all messages = %v", all)
	}
	fs.fail.Store(false)
	snap, err := fs.Load(t.Context(), "s1")
	if err != nil || !slices.Equal(contents(snap.Messages), want) || snap.Messages[0].RolledBack {
		t.Fatalf("stored %v, %v", snap, err)
	}
}

// TestAbortAfterToolsDoesNotWaitForAPerson: an abort at after_tools that
// waits while a batch runs acts once the batch has nothing left but a
// call held for a person, as one that comes to a paused run does: the
// held call is answered rejected and the run ends. Before, the run paused
// with the abort waiting, agent_end came only with the approval's
// timeout, and an approval given meanwhile ran the held call although
// the abort had been answered.
func TestAbortAfterToolsDoesNotWaitForAPerson(t *testing.T) {
	g := newGate()
	script := `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"x"}},{"name":"hold","args":{}}]},{"text":"never"}]}`
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1", Model: scriptModel(t, "", script),
		Tools:   demoSet(t, holdTool("hold", tools.Killable, g)),
		Plugins: []plugins.Plugin{&oncePlugin{hook: plugins.BeforeTool, act: plugins.Action{Kind: plugins.HoldForApproval}}}})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("approval_required", 1)
	h.waitFor("tool_execution_start", 2)
	h.ok(&eventsv1.Abort{At: string(events.AtAfterTools)})
	g.open()
	if r := h.waitFor("agent_end", 1).GetAgentEnd().Reason; r != string(events.EndAborted) {
		t.Errorf("agent_end reason %s", r)
	}
	if r := h.send(&eventsv1.Approve{ApprovalId: "ap-1"}); r.GetError().GetCode() != events.CodeNoPendingApproval {
		t.Errorf("approve after the run ended: %v, want no_pending_approval", r)
	}
	want := []string{"user:go", "assistant:", "tool:" + tools.RejectedPrefix + "aborted", "tool:hold done"}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
}

// TestAbortKeepsItsPlaceBehindAHeldPrompt: while the store is down, a
// prompt is held for a try at the store; an abort sent after it is held
// behind it, so the session takes them in the order they came: the
// prompt's run starts once the try lands, and the abort ends it. Before,
// the abort went first (at idle, it stopped nothing) and the prompt's run
// then went on unaborted.
func TestAbortKeepsItsPlaceBehindAHeldPrompt(t *testing.T) {
	gated := &storetest.Gated{Store: memory.New()}
	st := &failingStore{Store: gated}
	h := storedHarness(t, st, Spec{Model: scriptModel(t, "", `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":60000}}]},{"text":"never"}]}`), Tools: demoSet(t)})
	st.fail.Store(true)
	if r := h.send(&eventsv1.Prompt{Text: "p1"}); r.GetError().GetCode() != codeStoreFailed {
		t.Fatalf("p1 = %v, want store_failed", r)
	}
	st.fail.Store(false)
	gated.HoldWrites() // the try at the store waits
	defer gated.ReleaseWrites()
	p2 := h.sys.Root.RequestFuture(h.pid, &eventsv1.Prompt{Text: "p2"}, wait)
	abort := h.sys.Root.RequestFuture(h.pid, &eventsv1.Abort{}, wait)
	h.state() // taken after both
	gated.ReleaseWrites()
	for _, f := range []*actor.Future{p2, abort} {
		if res, err := f.Result(); err != nil || res.(*eventsv1.Reply).GetError() != nil {
			t.Fatalf("reply %v, %v", res, err)
		}
	}
	if r := h.waitFor("agent_end", 1).GetAgentEnd(); r.Reason != string(events.EndAborted) {
		t.Fatalf("p2's run ended %v, want aborted", r)
	}
	if got := contents(h.history()); len(got) == 0 || got[0] != "user:p2" {
		t.Fatalf("history %q, want p2's run", got)
	}
}

// TestToldResultSurvivesTheStoreGoingDown: a result the store kept
// (Volatile.Settled) and a subscriber was told stays the call's result
// when a later write fails for good and the session goes back to what the
// store holds. Before, the rollback answered every open call of the batch
// "interrupted: the store failed", the told one too, and the next write
// stored that.
func TestToldResultSurvivesTheStoreGoingDown(t *testing.T) {
	mem := memory.New()
	st := &failingStore{Store: mem}
	script := `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"x"}},{"name":"sleep","args":{"ms":300}}]},{"text":"done"}]}`
	h := storedHarness(t, st, Spec{Model: scriptModel(t, "", script), Tools: demoSet(t)})
	h.ok(&eventsv1.Prompt{Text: "go"})
	if end := h.waitToolEnd("c-1").GetToolExecutionEnd(); end.Result != "x" {
		t.Fatalf("c-1 ended %q", end.Result)
	}
	waitStored(t, mem, func(s *store.Snapshot) bool {
		return len(s.Volatile.Settled) == 1 && s.Volatile.Settled[0].Content == "x"
	})
	st.fail.Store(true)
	if e := h.waitFor("error", 1).GetError(); e.Code != codeStoreFailed {
		t.Fatalf("error %v", e)
	}
	st.fail.Store(false)
	h.ok(&eventsv1.Prompt{Text: "again"}) // the try at the store lands: up again
	h.waitFor("agent_end", 2)
	h.state() // answered once what was told is stored
	snap, err := mem.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]string{}
	for _, m := range snap.Messages {
		if m.ToolCallId != "" {
			results[m.ToolCallId] = m.Content
		}
	}
	if results["c-1"] != "x" || results["c-2"] != interruptedByStore {
		t.Fatalf("stored results %q, want c-1's told x and c-2 interrupted", results)
	}
}
