package storetest

import (
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

// testRollbackRewrite: a rollback rewrites the history from the working
// history's start with the run's messages marked rolled back, in their
// place; later messages follow them, and a compaction after it archives
// them with the rest. The flag is part of the stored message.
func testRollbackRewrite(t *testing.T, e *env) {
	e.create(t, "s1")
	e.apply(t, "s1", &store.Batch{Messages: msgs(0, 5)})
	rolled := func(ms []*eventsv1.Message) []*eventsv1.Message {
		out := make([]*eventsv1.Message, len(ms))
		for i, m := range ms {
			out[i] = proto.Clone(m).(*eventsv1.Message)
			out[i].RolledBack = true
		}
		return out
	}
	view := append(msgs(0, 2), rolled(msgs(2, 3))...)
	for _, name := range []string{"rollback", "retried rollback"} {
		e.apply(t, "s1", &store.Batch{Rewrite: true, Messages: view})
		snap := e.load(t, "s1")
		wantMessages(t, name, snap.Messages, view)
		if snap.MessageCount != 5 || snap.HistoryStart != 0 {
			t.Fatalf("%s: MessageCount, HistoryStart = %d, %d, want 5, 0", name, snap.MessageCount, snap.HistoryStart)
		}
	}
	e.apply(t, "s1", &store.Batch{From: 5, Messages: msgs(5, 2)})
	all := append(view, msgs(5, 2)...)
	wantMessages(t, "append after the rollback", e.load(t, "s1").Messages, all)
	got, err := e.st.Messages(e.ctx, "s1", 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	wantMessages(t, "Messages of the rolled-back span", got, all[2:5])
}

// testRollbackUncompacts: a rollback of a run that a compaction reached
// into brings archived messages back into the working history: its
// rewrite starts before the stored working history, and its
// HistoryStart moves back, to 0 too (a rewrite always records it).
func testRollbackUncompacts(t *testing.T, e *env) {
	e.create(t, "s1")
	e.apply(t, "s1", &store.Batch{Messages: msgs(0, 4)})
	summary := &eventsv1.Message{Role: "user", Content: "summary of 0-2", Summary: true}
	e.apply(t, "s1", &store.Batch{Rewrite: true, From: 3, Messages: []*eventsv1.Message{summary, msgs(3, 1)[0]}, HistoryStart: 3})
	rolled := []*eventsv1.Message{proto.Clone(msgs(2, 1)[0]).(*eventsv1.Message), proto.Clone(summary).(*eventsv1.Message), proto.Clone(msgs(3, 1)[0]).(*eventsv1.Message)}
	for _, m := range rolled {
		m.RolledBack = true
	}
	view := append(msgs(0, 2), rolled...)
	for _, name := range []string{"rollback", "retried rollback"} {
		e.apply(t, "s1", &store.Batch{Rewrite: true, Messages: view})
		snap := e.load(t, "s1")
		wantMessages(t, name, snap.Messages, view)
		if snap.MessageCount != 5 || snap.HistoryStart != 0 {
			t.Fatalf("%s: MessageCount, HistoryStart = %d, %d, want 5, 0", name, snap.MessageCount, snap.HistoryStart)
		}
	}
}
