package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

func testAppend(t *testing.T, e *env) {
	e.create(t, "s1")
	e.create(t, "s2")
	var want []*eventsv1.Message
	for _, n := range []int{1, 3, 1, 5} {
		b := &store.Batch{From: len(want), Messages: msgs(len(want), n)}
		e.apply(t, "s1", b)
		want = append(want, msgs(len(want), n)...)
		snap := e.load(t, "s1")
		wantMessages(t, fmt.Sprintf("after %d", len(want)), snap.Messages, want)
		if snap.MessageCount != len(want) {
			t.Fatalf("MessageCount = %d, want %d", snap.MessageCount, len(want))
		}
	}
	if snap := e.load(t, "s2"); len(snap.Messages) != 0 || snap.MessageCount != 0 {
		t.Fatalf("s2 got messages: %+v", snap)
	}
	// An empty message is a message, stored and returned as such.
	e.apply(t, "s2", &store.Batch{Messages: []*eventsv1.Message{{}}})
	wantMessages(t, "empty message", e.load(t, "s2").Messages, []*eventsv1.Message{{}})
}

func testAppendIdempotent(t *testing.T, e *env) {
	e.create(t, "s1")
	all := msgs(0, 6)
	steps := []struct {
		name  string
		batch store.Batch
		want  int
	}{
		{"first", store.Batch{From: 0, Messages: all[:3]}, 3},
		{"retried", store.Batch{From: 0, Messages: all[:3]}, 3},
		{"overlapping", store.Batch{From: 2, Messages: all[2:5]}, 5},
		{"stale retry of a prefix", store.Batch{From: 1, Messages: all[1:2]}, 5},
		{"different content at a stored index is skipped", store.Batch{From: 4, Messages: []*eventsv1.Message{{Role: "user", Content: "changed"}, all[5]}}, 6},
	}
	for _, st := range steps {
		e.apply(t, "s1", &st.batch)
		snap := e.load(t, "s1")
		wantMessages(t, st.name, snap.Messages, all[:st.want])
		if snap.MessageCount != st.want {
			t.Fatalf("%s: MessageCount = %d, want %d", st.name, snap.MessageCount, st.want)
		}
	}
}

func testGap(t *testing.T, e *env) {
	e.create(t, "s1")
	e.apply(t, "s1", &store.Batch{Messages: msgs(0, 2)})
	before := e.load(t, "s1")
	e.clock.Advance(time.Second)
	err := e.st.Apply(e.ctx, "s1", &store.Batch{From: 3, Messages: msgs(3, 1), State: "running", Volatile: &store.Volatile{PromptQueue: []string{"x"}}})
	wantErr(t, "Apply with a gap", err, store.ErrGap)
	wantSame(t, "after the gap", e.load(t, "s1"), before)
}

func testAtomicBatch(t *testing.T, e *env) {
	e.create(t, "s1")
	e.apply(t, "s1", &store.Batch{Messages: msgs(0, 2), State: "idle", Usage: &eventsv1.Usage{TotalTokens: 7},
		Volatile: &store.Volatile{PromptQueue: []string{"kept"}}})
	before := e.load(t, "s1")
	e.clock.Advance(time.Second)

	// The third message cannot be encoded (proto3 strings must be UTF-8),
	// so the batch fails part-way through its messages. (Failures inside
	// the database transaction — a full disk, a dropped connection — are
	// injected by the SQLite and PostgreSQL packages' own fault tests.)
	bad := msgs(2, 4)
	bad[2] = &eventsv1.Message{Role: "tool", Content: "invalid \xff utf-8"}
	err := e.st.Apply(e.ctx, "s1", &store.Batch{
		From: 2, Messages: bad, State: "executing_tools", EventSeq: 99,
		Usage:    &eventsv1.Usage{TotalTokens: 100},
		Config:   &store.Config{Model: "changed"},
		Volatile: &store.Volatile{PromptQueue: []string{"replaced"}},
	})
	wantErr(t, "Apply of an unencodable message", err, store.ErrInvalid)
	wantSame(t, "after the failed batch", e.load(t, "s1"), before)

	// Nothing is stuck: the corrected batch lands whole.
	bad[2] = msgs(4, 1)[0]
	e.apply(t, "s1", &store.Batch{From: 2, Messages: bad, State: "idle"})
	wantMessages(t, "after the retry", e.load(t, "s1").Messages, append(msgs(0, 4), bad[2], bad[3]))
}

func testInvalidBatch(t *testing.T, e *env) {
	e.create(t, "s1")
	e.apply(t, "s1", &store.Batch{Messages: msgs(0, 1)})
	before := e.load(t, "s1")
	for _, tc := range []struct {
		name  string
		batch *store.Batch
	}{
		{"nil batch", nil},
		{"negative From", &store.Batch{From: -1, Messages: msgs(0, 1)}},
		{"nil message", &store.Batch{From: 1, Messages: []*eventsv1.Message{msgs(1, 1)[0], nil}}},
		{"negative history start", &store.Batch{HistoryStart: -1}},
		{"history start beyond the history", &store.Batch{HistoryStart: 2}},
		{"history start beyond a rewrite", &store.Batch{Rewrite: true, Messages: msgs(0, 1), HistoryStart: 2}},
		{"settings not JSON", &store.Batch{Config: &store.Config{Spec: []byte("{")}}},
		{"settings not an object", &store.Batch{Config: &store.Config{Spec: []byte(`["system"]`)}}},
		{"NUL in state", &store.Batch{State: "idle\x00"}},
		{"title not UTF-8", &store.Batch{Title: "Fix \xff"}},
		{"NUL byte in the settings", &store.Batch{Config: &store.Config{Spec: []byte("{\"system\":\"\x00\"}")}}},
		{"NUL in model", &store.Batch{Config: &store.Config{Model: "m\x00"}}},
		{"nil approval", &store.Batch{Volatile: &store.Volatile{Approvals: []store.Approval{{}}}}},
		{"nil question", &store.Batch{Volatile: &store.Volatile{Question: &store.Question{}}}},
		{"nil steering item", &store.Batch{Volatile: &store.Volatile{SteeringQueue: []*eventsv1.SteeringItem{nil}}}},
		{"unencodable steering", &store.Batch{Volatile: &store.Volatile{SteeringQueue: []*eventsv1.SteeringItem{{Text: "\xff"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, "Apply", e.st.Apply(e.ctx, "s1", tc.batch), store.ErrInvalid)
			wantSame(t, "after", e.load(t, "s1"), before)
		})
	}
	wantErr(t, "Apply to an empty id", e.st.Apply(e.ctx, "", &store.Batch{}), store.ErrInvalid)
}

func testCancelledContext(t *testing.T, e *env) {
	e.create(t, "s1")
	before := e.load(t, "s1")
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if err := e.st.Apply(ctx, "s1", &store.Batch{Messages: msgs(0, 2), State: "running"}); err == nil {
		t.Fatal("Apply with a cancelled context succeeded")
	}
	wantSame(t, "after the cancelled Apply", e.load(t, "s1"), before)
	e.apply(t, "s1", &store.Batch{Messages: msgs(0, 2)})
}

func testRewrite(t *testing.T, e *env) {
	e.create(t, "s1")
	e.apply(t, "s1", &store.Batch{Messages: msgs(0, 6)})
	summary := []*eventsv1.Message{{Role: "user", Content: "summary of 0-3"}, msgs(4, 1)[0], msgs(5, 1)[0]}
	for _, name := range []string{"rewrite", "retried rewrite"} {
		e.apply(t, "s1", &store.Batch{Rewrite: true, Messages: summary})
		snap := e.load(t, "s1")
		wantMessages(t, name, snap.Messages, summary)
		if snap.MessageCount != 3 {
			t.Fatalf("%s: MessageCount = %d, want 3", name, snap.MessageCount)
		}
	}
	e.apply(t, "s1", &store.Batch{From: 3, Messages: msgs(6, 1)})
	wantMessages(t, "append after rewrite", e.load(t, "s1").Messages, append(summary, msgs(6, 1)...))
	e.apply(t, "s1", &store.Batch{Rewrite: true})
	wantMessages(t, "rewrite to empty", e.load(t, "s1").Messages, nil)
}

// testCompactRewrite stores a compaction: the summary and the messages
// kept replace the history from the cut on, and the working history
// starts at the summary, in one batch; the messages before stay.
func testCompactRewrite(t *testing.T, e *env) {
	e.create(t, "s1")
	e.apply(t, "s1", &store.Batch{Messages: msgs(0, 6)})
	summary := &eventsv1.Message{Role: "user", Content: "summary of 0-3", Summary: true}
	working := append([]*eventsv1.Message{summary}, msgs(4, 2)...)
	all := append(msgs(0, 4), working...)
	for _, name := range []string{"compaction", "retried compaction"} {
		e.apply(t, "s1", &store.Batch{Rewrite: true, From: 4, Messages: working, HistoryStart: 4})
		snap := e.load(t, "s1")
		wantMessages(t, name, snap.Messages, all)
		if snap.MessageCount != 7 || snap.HistoryStart != 4 {
			t.Fatalf("%s: MessageCount, HistoryStart = %d, %d, want 7, 4", name, snap.MessageCount, snap.HistoryStart)
		}
	}
	e.apply(t, "s1", &store.Batch{From: 7, Messages: msgs(6, 1)})
	all = append(all, msgs(6, 1)...)
	snap := e.load(t, "s1")
	wantMessages(t, "append after compaction", snap.Messages, all)
	if snap.HistoryStart != 4 {
		t.Fatalf("HistoryStart after an append = %d, want 4", snap.HistoryStart)
	}
	// A second compaction replaces the first summary too.
	second := []*eventsv1.Message{{Role: "user", Content: "summary of 0-5", Summary: true}, msgs(6, 1)[0]}
	e.apply(t, "s1", &store.Batch{Rewrite: true, From: 7, Messages: second, HistoryStart: 7})
	snap = e.load(t, "s1")
	wantMessages(t, "second compaction", snap.Messages, append(all[:7:7], second...))
	if snap.MessageCount != 9 || snap.HistoryStart != 7 {
		t.Fatalf("second compaction: MessageCount, HistoryStart = %d, %d, want 9, 7", snap.MessageCount, snap.HistoryStart)
	}
	before := e.load(t, "s1")
	wantErr(t, "a start beyond the history", e.st.Apply(e.ctx, "s1", &store.Batch{HistoryStart: 10}), store.ErrInvalid)
	wantSame(t, "after the refused start", e.load(t, "s1"), before)
}

func testMessagesPage(t *testing.T, e *env) {
	e.create(t, "s1")
	all := msgs(0, 10)
	e.apply(t, "s1", &store.Batch{Messages: all})
	for _, tc := range []struct {
		from, limit int
		want        []*eventsv1.Message
	}{
		{0, 0, all},
		{0, -1, all},
		{0, 3, all[:3]},
		{3, 3, all[3:6]},
		{8, 5, all[8:]},
		{9, 0, all[9:]},
		{10, 0, nil},
		{15, 2, nil},
	} {
		t.Run(fmt.Sprintf("from=%d,limit=%d", tc.from, tc.limit), func(t *testing.T) {
			got, err := e.st.Messages(e.ctx, "s1", tc.from, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			wantMessages(t, "Messages", got, tc.want)
		})
	}
	_, err := e.st.Messages(e.ctx, "s1", -1, 0)
	wantErr(t, "Messages(from -1)", err, store.ErrInvalid)
}
