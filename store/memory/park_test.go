package memory_test

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// TestPutAndRemove: Put stores a session whole, as Load gives it back —
// its times and event number as given, no lease — and replaces what the
// id held; Remove forgets that session alone, not its sub-agents.
func TestPutAndRemove(t *testing.T) {
	st := memory.New()
	defer st.Close()
	ctx := t.Context()
	at := time.Date(2026, 11, 28, 3, 4, 5, 6000, time.UTC)
	snap := &store.Snapshot{
		Session: store.Session{State: "idle", HistoryStart: 1, Title: "t", EventSeq: 42, UpdatedAt: at,
			Usage: &eventsv1.Usage{InputTokens: 3}},
		Volatile: store.Volatile{Counters: store.Counters{Runs: 2}, Todos: []*eventsv1.Todo{{Text: "x", Status: "pending"}}},
		Messages: []*eventsv1.Message{{Role: "user", Content: "a"}, {Role: "user", Content: "sum", Summary: true}, {Role: "assistant", Content: "b"}},
	}
	cfg := store.Config{Model: "script:x", User: "u"}
	if err := st.Put("p", cfg, snap); err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, "p/sub-1", cfg); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != "idle" || got.HistoryStart != 1 || got.Title != "t" || got.EventSeq != 42 || !got.UpdatedAt.Equal(at) ||
		got.Owner != "" || got.MessageCount != 3 || got.Config.User != "u" || got.Config.Model != "script:x" ||
		got.Volatile.Counters.Runs != 2 || len(got.Volatile.Todos) != 1 || !proto.Equal(got.Usage, snap.Usage) {
		t.Fatalf("loaded %+v", got)
	}
	for i, m := range got.Messages {
		if m.Content != snap.Messages[i].Content {
			t.Fatalf("message %d = %q, want %q", i, m.Content, snap.Messages[i].Content)
		}
	}
	snap.Messages, snap.HistoryStart, snap.EventSeq = snap.Messages[:1], 0, 50
	if err := st.Put("p", cfg, snap); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Load(ctx, "p"); len(got.Messages) != 1 || got.EventSeq != 50 {
		t.Fatalf("after a second Put: %d messages, event %d", len(got.Messages), got.EventSeq)
	}
	snap.HistoryStart = 5
	if err := st.Put("p", cfg, snap); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Put with the history start past the history: %v", err)
	}
	if !st.Remove("p") || st.Remove("p") {
		t.Fatal("Remove did not report what it removed")
	}
	if _, err := st.Get(ctx, "p"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Remove: %v", err)
	}
	if _, err := st.Get(ctx, "p/sub-1"); err != nil {
		t.Fatalf("the sub-agent went with its parent: %v", err)
	}
}
