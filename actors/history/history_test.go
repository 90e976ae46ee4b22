package history_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tack-run/tack/actors/history"
	"github.com/tack-run/tack/llm"
)

// msgs parses "role:content" words; "assistant:x>c1,c2" calls c1 and c2,
// "tool:c1=r" answers c1, "-" before a word marks it rolled back.
func msgs(words ...string) []*llm.Message {
	var out []*llm.Message
	for _, w := range words {
		rolled := strings.HasPrefix(w, "-")
		w = strings.TrimPrefix(w, "-")
		role, content, _ := strings.Cut(w, ":")
		m := &llm.Message{Role: role, Content: content, RolledBack: rolled}
		switch role {
		case llm.RoleAssistant:
			text, calls, ok := strings.Cut(content, ">")
			m.Content = text
			if ok {
				for _, id := range strings.Split(calls, ",") {
					m.ToolCalls = append(m.ToolCalls, &llm.ToolCall{Id: id, Name: "t"})
				}
			}
		case llm.RoleTool:
			id, res, _ := strings.Cut(content, "=")
			m.ToolCallId, m.Content = id, res
		}
		out = append(out, m)
	}
	return out
}

// words renders messages back, with "~" for compacted.
func words(ms []*llm.Message) []string {
	var out []string
	for _, m := range ms {
		w := m.Role + ":" + m.Content
		if m.Role == llm.RoleTool {
			w = m.Role + ":" + m.ToolCallId + "=" + m.Content
		}
		if m.RolledBack {
			w = "-" + w
		}
		if m.Compacted {
			w = "~" + w
		}
		out = append(out, w)
	}
	return out
}

func same(t *testing.T, what string, got []*llm.Message, want ...string) {
	t.Helper()
	if g := words(got); !slices.Equal(g, want) {
		t.Fatalf("%s = %q, want %q", what, g, want)
	}
}

// TestPending: what each write carries — the new messages after a plain
// commit, the whole order from the working history's start after a
// rollback or a compaction (and when asked, after a failed write) — and
// that Stored moves the mark, so the next write carries only what is new.
func TestPending(t *testing.T) {
	h := &history.History{}
	for _, m := range msgs("user:p1", "assistant:a1") {
		h.Commit(m)
	}
	w := h.Pending(false)
	if w.From != 0 || w.Rewrite {
		t.Fatalf("first write %+v", w)
	}
	same(t, "first write", w.Messages, "user:p1", "assistant:a1")
	h.Stored(w)
	h.Commit(msgs("user:p2")[0])
	w = h.Pending(false)
	if w.From != 2 || w.Rewrite {
		t.Fatalf("second write %+v", w)
	}
	same(t, "second write", w.Messages, "user:p2")
	if w = h.Pending(true); !w.Rewrite || w.From != 0 {
		t.Fatalf("a rewrite asked for: %+v", w)
	}
	same(t, "asked rewrite", w.Messages, "user:p1", "assistant:a1", "user:p2")
	h.Stored(h.Pending(false))

	h.Commit(msgs("assistant:a2")[0])
	if !h.RollBack(2) {
		t.Fatal("RollBack(2) took nothing")
	}
	same(t, "after the rollback", h.Messages(), "user:p1", "assistant:a1")
	w = h.Pending(false)
	if !w.Rewrite || w.From != 0 {
		t.Fatalf("write after a rollback %+v", w)
	}
	same(t, "write after a rollback", w.Messages, "user:p1", "assistant:a1", "-user:p2", "-assistant:a2")
	h.Stored(w)
	h.Commit(msgs("user:p3")[0])
	w = h.Pending(false)
	if w.Rewrite || w.From != 4 {
		t.Fatalf("write after the stored rollback %+v", w)
	}
	same(t, "write after the stored rollback", w.Messages, "user:p3")
}

// TestCompact: the first cut messages move to the archive with the
// rolled-back spans among them, a summary takes their place, and the
// spans past the cut move with the working history.
func TestCompact(t *testing.T) {
	h := history.Restore(msgs("user:p1", "assistant:a1>c1", "tool:c1=r", "-user:x", "user:p2", "assistant:a2", "-user:y", "user:p3"), 0)
	same(t, "working", h.Messages(), "user:p1", "assistant:a1", "tool:c1=r", "user:p2", "assistant:a2", "user:p3")
	if cut := h.CompactCut(2); cut != 4 {
		t.Fatalf("CompactCut(2) = %d, want 4", cut)
	}
	h.Compact(4, &llm.Message{Role: llm.RoleUser, Content: "sum", Summary: true})
	same(t, "working", h.Messages(), "user:sum", "assistant:a2", "user:p3")
	same(t, "all", h.All(), "~user:p1", "~assistant:a1", "~tool:c1=r", "~-user:x", "~user:p2", "user:sum", "assistant:a2", "-user:y", "user:p3")
	if n := h.CallsOutside(); n != 1 {
		t.Fatalf("CallsOutside = %d, want 1 (c1, archived)", n)
	}
	// The rewrite starts where the store's working history does: the store
	// may not hold what the compaction archived (one under way while a
	// write was), nor know the summary's place.
	w := h.Pending(false)
	if !w.Rewrite || w.From != 0 || w.Start != 5 {
		t.Fatalf("write after a compaction %+v", w)
	}
	same(t, "write after a compaction", w.Messages, "user:p1", "assistant:a1", "tool:c1=r", "-user:x", "user:p2", "user:sum", "assistant:a2", "-user:y", "user:p3")
	h.Stored(w)
	h.Compact(2, &llm.Message{Role: llm.RoleUser, Content: "sum2", Summary: true})
	if w := h.Pending(false); !w.Rewrite || w.From != 5 || w.Start != 8 {
		t.Fatalf("write after a second compaction, the first stored: %+v", w)
	}
	if cut := h.CompactCut(2); cut != 0 {
		t.Fatalf("CompactCut with only a summary before the kept: %d", cut)
	}
}

// TestCompactCutTurnBoundary: the first message kept is never a tool result.
func TestCompactCutTurnBoundary(t *testing.T) {
	h := history.Restore(msgs("user:p1", "assistant:a1>c1,c2", "tool:c1=r", "tool:c2=r", "assistant:done"), 0)
	for keep, want := range map[int]int{1: 4, 2: 1, 3: 1, 4: 1, 5: 0, 9: 0} {
		if cut := h.CompactCut(keep); cut != want {
			t.Errorf("CompactCut(%d) = %d, want %d", keep, cut, want)
		}
	}
}

// TestRevert: a write that failed for good leaves the history as the
// store holds it — a rollback or compaction it does not hold undone, the
// tail it does not hold cut — and CloseCalls answers what is left open.
func TestRevert(t *testing.T) {
	h := &history.History{}
	for _, m := range msgs("user:p1", "assistant:a1>c1,c2", "tool:c1=r") {
		h.Commit(m)
	}
	h.Stored(h.Pending(false))
	h.Commit(msgs("tool:c2=r")[0])
	h.RollBack(1)
	h.Compact(1, &llm.Message{Role: llm.RoleUser, Content: "sum", Summary: true})
	h.Revert()
	same(t, "reverted", h.Messages(), "user:p1", "assistant:a1", "tool:c1=r")
	same(t, "all", h.All(), "user:p1", "assistant:a1", "tool:c1=r")
	if w := h.Pending(false); w.Rewrite || w.From != 3 || len(w.Messages) != 0 {
		t.Fatalf("after the revert the store holds everything: %+v", w)
	}
	if n := h.CloseCalls("interrupted", nil); n != 1 {
		t.Fatalf("CloseCalls answered %d, want 1 (c2)", n)
	}
	same(t, "closed", h.Messages(), "user:p1", "assistant:a1", "tool:c1=r", "tool:c2=interrupted")
}

// TestRepaired: a history that needs no fix is sent as it is and counted
// checked; one with an open call is sent repaired, each time.
func TestRepaired(t *testing.T) {
	h := history.Restore(msgs("user:p1", "assistant:a1"), 0)
	got, fixes := h.Repaired()
	if len(fixes) != 0 {
		t.Fatalf("fixes %v", fixes)
	}
	same(t, "sent", got, "user:p1", "assistant:a1")
	h.Commit(msgs("assistant:a2>c9")[0])
	h.Commit(msgs("user:p2")[0])
	for range 2 {
		got, fixes = h.Repaired()
		if len(fixes) == 0 {
			t.Fatal("an open call was not repaired")
		}
		if slices.Equal(words(got), words(h.Messages())) {
			t.Fatal("the repaired request is the broken history")
		}
	}
}

// TestWhole: what a parked session is written as restores to the same
// history — archive, working history and rolled-back spans in their
// places — and the store needs nothing of it again.
func TestWhole(t *testing.T) {
	h := history.Restore(msgs("user:p1", "assistant:a1>c1", "tool:c1=r", "-user:x", "user:p2", "assistant:a2", "-user:y", "user:p3"), 0)
	h.Compact(4, &llm.Message{Role: llm.RoleUser, Content: "sum", Summary: true})
	h.Commit(msgs("assistant:a3")[0])
	all, start := h.Whole()
	if start != 5 {
		t.Fatalf("start %d, want 5", start)
	}
	same(t, "whole", all, "user:p1", "assistant:a1", "tool:c1=r", "-user:x", "user:p2", "user:sum", "assistant:a2", "-user:y", "user:p3", "assistant:a3")
	back := history.Restore(all, start)
	same(t, "restored working", back.Messages(), words(h.Messages())...)
	same(t, "restored all", back.All(), words(h.All())...)
	if w := back.Pending(false); len(w.Messages) != 0 || w.Rewrite {
		t.Fatalf("a restored history has a write pending: %+v", w)
	}
}

// ids lists the ids of the tool calls of m.
func ids(m *llm.Message) []string {
	var out []string
	for _, c := range m.ToolCalls {
		out = append(out, c.Id)
	}
	return out
}

// TestFresh: a call id the history holds anywhere — compacted, rolled
// back, in the working history — or that an earlier call of the message
// gives, or an empty one, is replaced by the first free id-N from 2 on;
// free ids stay, and a message whose ids are all free comes back as it
// is. Before, a session let a model's reused id into its history when the
// request had been trimmed of the call that first had it.
func TestFresh(t *testing.T) {
	h := history.Restore(msgs("user:p1", "assistant:>old", "tool:old=r", "-assistant:>gone", "-tool:gone=r",
		"user:p2", "assistant:>cur,cur-2", "tool:cur=r", "tool:cur-2=r"), 3)
	same(t, "all", h.All(), "~user:p1", "~assistant:", "~tool:old=r", "-assistant:", "-tool:gone=r",
		"user:p2", "assistant:", "tool:cur=r", "tool:cur-2=r")
	free := msgs("assistant:>new,other")[0]
	if got := h.Fresh(free); got != free {
		t.Errorf("free ids were replaced: %q", ids(got))
	}
	m := msgs("assistant:>old,gone,cur,new,new,")[0]
	got := h.Fresh(m)
	if want := []string{"old-2", "gone-2", "cur-3", "new", "new-2", "call-2"}; !slices.Equal(ids(got), want) {
		t.Errorf("Fresh gave %q, want %q", ids(got), want)
	}
	if want := []string{"old", "gone", "cur", "new", "new", ""}; !slices.Equal(ids(m), want) {
		t.Errorf("Fresh changed its message: %q", ids(m))
	}
	h.Commit(got)
	if again := h.Fresh(msgs("assistant:>new,old-2")[0]); !slices.Equal(ids(again), []string{"new-3", "old-2-2"}) {
		t.Errorf("after the commit Fresh gave %q", ids(again))
	}
}

// TestFreshAfterRevert: a call cut by a failed write gives its id back.
func TestFreshAfterRevert(t *testing.T) {
	h := &history.History{}
	h.Commit(msgs("user:p1")[0])
	h.Stored(h.Pending(false))
	h.Commit(h.Fresh(msgs("assistant:>x")[0]))
	if got := ids(h.Fresh(msgs("assistant:>x")[0])); !slices.Equal(got, []string{"x-2"}) {
		t.Fatalf("with x committed Fresh gave %q", got)
	}
	h.Revert()
	if got := ids(h.Fresh(msgs("assistant:>x")[0])); !slices.Equal(got, []string{"x"}) {
		t.Errorf("after the revert Fresh gave %q, want x", got)
	}
}

// TestRepairedSeesRepeatOfCheckedID: a call added since the last request
// that gives the id of a call checked before is found and repaired on
// every request. Before, the pass checked only what was added, so the
// request carried the id twice.
func TestRepairedSeesRepeatOfCheckedID(t *testing.T) {
	h := &history.History{}
	for _, m := range msgs("user:p1", "assistant:>c1", "tool:c1=r", "assistant:a1") {
		h.Commit(m)
	}
	if _, fixes := h.Repaired(); len(fixes) != 0 {
		t.Fatalf("fixes %v", fixes)
	}
	for _, m := range msgs("user:p2", "assistant:>c1", "tool:c1=again") {
		h.Commit(m)
	}
	for range 2 {
		got, fixes := h.Repaired()
		if len(fixes) == 0 {
			t.Fatal("the repeated id was not repaired")
		}
		same(t, "sent", got, "user:p1", "assistant:", "tool:c1=r", "assistant:a1", "user:p2", "assistant:")
	}
}

// TestRevertAfterOneOfTwoCompactionsLanded: a write that carried one
// compaction lands while a second waits; when the second's write then
// fails for good, the history goes back to what the first stored. Before,
// it went back to the working history before both, under the first's
// archive: messages twice over, the first summary lost.
func TestRevertAfterOneOfTwoCompactionsLanded(t *testing.T) {
	h := &history.History{}
	for _, m := range msgs("user:p1", "assistant:a1", "user:p2", "assistant:a2", "user:p3", "assistant:a3") {
		h.Commit(m)
	}
	h.Stored(h.Pending(false))
	h.Compact(2, &llm.Message{Role: llm.RoleUser, Content: "sum1", Summary: true})
	first := h.Pending(false)
	h.Compact(3, &llm.Message{Role: llm.RoleUser, Content: "sum2", Summary: true})
	h.Stored(first)
	h.Revert()
	same(t, "reverted", h.Messages(), "user:sum1", "user:p2", "assistant:a2", "user:p3", "assistant:a3")
	same(t, "all", h.All(), "~user:p1", "~assistant:a1", "user:sum1", "user:p2", "assistant:a2", "user:p3", "assistant:a3")
	if w := h.Pending(false); w.Rewrite || len(w.Messages) != 0 {
		t.Fatalf("after the revert the store holds everything: %+v", w)
	}
}

// TestRollBackTo: a run whose first messages a compaction archived is
// rolled back to where it started: the messages before it come back from
// the archive as they were (an earlier rollback's span too), and the
// summary goes out with the run's messages, in the store's order; the
// write rewrites from there, and the store's order restores the same.
func TestRollBackTo(t *testing.T) {
	h := history.Restore(msgs("user:old", "assistant:a0", "user:p1", "assistant:a1", "-user:x", "user:run", "assistant:r1>c1", "tool:c1=r"), 2)
	h.Stored(h.Pending(false))
	start := h.Point(2) // user:run, after the span of x
	h.Commit(msgs("assistant:r2")[0])
	h.Compact(4, &llm.Message{Role: llm.RoleUser, Content: "sum", Summary: true}) // p1 … r1>c1, past the run's start
	h.Commit(msgs("user:steer")[0])
	h.Compact(2, &llm.Message{Role: llm.RoleUser, Content: "sum2", Summary: true}) // sum, tool:c1=r
	if !h.RollBackTo(start) {
		t.Fatal("RollBackTo took nothing")
	}
	same(t, "working", h.Messages(), "user:p1", "assistant:a1")
	want := []string{"~user:old", "~assistant:a0", "user:p1", "assistant:a1", "-user:x",
		"-user:run", "-assistant:r1", "-user:sum", "-tool:c1=r", "-user:sum2", "-assistant:r2", "-user:steer"}
	same(t, "all", h.All(), want...)
	if n := h.CallsOutside(); n != 1 {
		t.Fatalf("CallsOutside = %d, want 1 (c1, rolled back)", n)
	}
	w := h.Pending(false)
	if !w.Rewrite || w.From != 2 || w.Start != 2 {
		t.Fatalf("write after the rollback %+v", w)
	}
	h.Stored(w)
	whole, at := h.Whole()
	r := history.Restore(whole, at)
	same(t, "restored working", r.Messages(), "user:p1", "assistant:a1")
	same(t, "restored all", r.All(), want...)

	// Once the store holds the rollback, a failed write keeps it.
	h.Commit(msgs("user:next")[0])
	h.Revert()
	same(t, "after a failed append", h.All(), want...)
}

// TestRollBackToReverted: a rollback to before a compaction that the
// store never took is undone by a write that fails for good, archive and
// all, as the compaction would have been.
func TestRollBackToReverted(t *testing.T) {
	h := history.Restore(msgs("user:p1", "assistant:a1", "user:run", "assistant:r1"), 0)
	start := h.Point(2)
	h.Compact(3, &llm.Message{Role: llm.RoleUser, Content: "sum", Summary: true})
	h.Stored(h.Pending(false))
	h.RollBackTo(start)
	same(t, "all", h.All(), "user:p1", "assistant:a1", "-user:run", "-user:sum", "-assistant:r1")
	h.Revert()
	same(t, "reverted", h.All(), "~user:p1", "~assistant:a1", "~user:run", "user:sum", "assistant:r1")
	if w := h.Pending(false); w.Rewrite {
		t.Fatalf("after the revert the store holds everything: %+v", w)
	}
}

// TestFreshCutsLongIDs: a call id longer than OpenAI takes (40
// characters; vLLM gives 46) is cut to 32, with "-N" when that is taken;
// a reused id near the bound keeps the suffix within it.
func TestFreshCutsLongIDs(t *testing.T) {
	long := "chatcmpl-tool-0123456789abcdef0123456789abcdef" // 46
	h := &history.History{}
	got := h.Fresh(msgs("assistant:>" + long + "," + long[:45] + "x")[0])
	if want := []string{long[:32], long[:32] + "-2"}; !slices.Equal(ids(got), want) {
		t.Fatalf("Fresh gave %q, want %q", ids(got), want)
	}
	h.Commit(got)
	near := strings.Repeat("a", 40)
	h.Commit(h.Fresh(msgs("assistant:>" + near)[0]))
	again := ids(h.Fresh(msgs("assistant:>" + near)[0]))
	if len(again[0]) > 40 || again[0] != near[:32]+"-2" {
		t.Fatalf("a reused 40-character id became %q", again[0])
	}
}

// TestRewriteFromTheLowestBase: a rollback that brought archived messages
// back (RollBackTo), then a compaction that archived them again, both
// before a write: the write rewrites from the lowest base the history
// had, so the store keeps the rolled-back marks of what the compaction
// archived again. Before, it started at the later base and the store kept
// the run's prompt unmarked.
func TestRewriteFromTheLowestBase(t *testing.T) {
	h := history.Restore(msgs("assistant:a1", "assistant:a2"), 0)
	h.Stored(h.Pending(false))
	start := h.Point(2)
	for _, m := range msgs("user:p3", "assistant:a4", "assistant:a5") {
		h.Commit(m)
	}
	h.Compact(3, &llm.Message{Role: llm.RoleUser, Content: "s6", Summary: true}) // a1, a2, p3
	h.Stored(h.Pending(false))
	h.RollBackTo(start)
	h.Commit(msgs("user:p7")[0])
	h.Compact(3, &llm.Message{Role: llm.RoleUser, Content: "s8", Summary: true}) // a1, a2, the rolled-back run, p7
	want := words(h.All())
	w := h.Pending(false)
	if w.From != 0 {
		t.Fatalf("the write rewrites from %d, want 0: %+v", w.From, w)
	}
	h.Stored(w)
	stored := append(slices.Clone(w.Messages[:0:0]), w.Messages...)
	r := history.Restore(stored, w.Start)
	same(t, "restored all", r.All(), want...)
}
