package actors

import (
	"slices"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
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
	superseded := "tool:" + tools.RejectedPrefix + statusSuperseded
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
				if ifBusy == IfBusyReject {
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
				if ifBusy == IfBusyRollback {
					want = want[3:]
					checkRolledBack(t, h, 3)
				}
				if got := contents(h.history()); !slices.Equal(got, want) {
					t.Errorf("history = %q, want %q", got, want)
				}
				if end := findType(h.since(mark), "agent_end").GetAgentEnd(); end.GetReason() != statusSuperseded {
					t.Errorf("the paused run's end = %v", end)
				}
			})
		}
		for _, at := range []string{AtNow, AtAfterResponse, AtAfterTools} {
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
	for _, ifBusy := range []string{IfBusyInterrupt, IfBusyRollback} {
		t.Run(ifBusy, func(t *testing.T) {
			h := newHarness(t, `{"turns":[{"tool_calls":[{"name":"sleep_stubborn","args":{"ms":200}}]},{"text":"A2"}]}`, &Env{ToolGrace: 10})
			h.ok(&eventsv1.Prompt{Text: "go"})
			h.waitFor("tool_execution_start", 1)
			mark := h.rec.Len()
			promptQueued(false)(t, h.send(&eventsv1.Prompt{Text: "p", IfBusy: ifBusy}))
			h.waitRunEnd("r-2")
			expectLabelled(t, "up to idle", h.since(mark), seq(one("agent_abort", "tool_killed"), toolEnd,
				one("message_committed", "turn_end"), abortEnd, runStart, answer, runEnd))
			want := []string{"user:go", "assistant:", "tool:" + tools.InterruptedByAbort, "user:p", "assistant:A2"}
			if ifBusy == IfBusyRollback {
				want = want[3:]
			}
			if got := contents(h.history()); !slices.Equal(got, want) {
				t.Errorf("history = %q, want %q", got, want)
			}
		})
	}
}
