package actors

import (
	"context"
	"slices"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// recordingStore keeps every batch it was asked to apply.
type recordingStore struct {
	store.Store
	batches chan *store.Batch
}

func (r *recordingStore) Apply(ctx context.Context, id string, b *store.Batch) error {
	select {
	case r.batches <- b:
	default:
	}
	return r.Store.Apply(ctx, id, b)
}

// TestCompactionStored: with a store, a compaction that leaves fewer
// messages than were stored is written as one batch — everything from
// where the store's working history started (what the compaction
// archived, which the store may not hold all of, then the summary and the
// messages kept from the cut on), the history's start moved — and the
// store then holds every message, the working history from the summary.
// compact_end is told once that write is done; a second compaction and
// the appends after each follow the same way.
func TestCompactionStored(t *testing.T) {
	mem := memory.New()
	rec := &recordingStore{Store: mem, batches: make(chan *store.Batch, 256)}
	h := storedHarness(t, rec, Spec{
		Model: scriptModel(t, "", `{"turns":[{"text":"a1"},{"text":"a2"},{"text":"a3"},{"text":"s1"},{"text":"a4"},{"text":"s2"}]}`),
		Tools: demoSet(t), Stored: &spec.Session{Context: &llm.ContextConfig{KeepRecent: new(2)}},
	})
	for i, p := range []string{"p1", "p2", "p3"} {
		h.ok(&eventsv1.Prompt{Text: p})
		h.waitFor("agent_end", i+1)
	}
	for len(rec.batches) > 0 {
		<-rec.batches
	}
	h.ok(&eventsv1.Compact{})
	h.waitFor("compact_end", 1)
	// compact_end waited for the write: its batch is in.
	var b *store.Batch
	for b == nil && len(rec.batches) > 0 {
		if next := <-rec.batches; next.Rewrite {
			b = next
		}
	}
	if b == nil {
		t.Fatal("no batch rewrote the history")
	}
	if b.From != 0 || b.HistoryStart != 4 || !slices.Equal(contents(b.Messages), []string{"user:p1", "assistant:a1", "user:p2", "assistant:a2", "user:" + SummaryPrefix + "s1", "user:p3", "assistant:a3"}) {
		t.Fatalf("the compaction's batch: from %d, start %d, messages %q", b.From, b.HistoryStart, contents(b.Messages))
	}
	stored := func(wantStart int, want ...string) {
		t.Helper()
		snap, err := mem.Load(context.Background(), "s1")
		if err != nil {
			t.Fatal(err)
		}
		if got := contents(snap.Messages); snap.HistoryStart != wantStart || !slices.Equal(got, want) {
			t.Fatalf("stored start %d, %q; want %d, %q", snap.HistoryStart, got, wantStart, want)
		}
	}
	stored(4, "user:p1", "assistant:a1", "user:p2", "assistant:a2", "user:"+SummaryPrefix+"s1", "user:p3", "assistant:a3")

	h.ok(&eventsv1.Prompt{Text: "p4"})
	h.waitFor("agent_end", 4)
	h.ok(&eventsv1.Compact{})
	h.waitFor("compact_end", 2)
	h.ok(&eventsv1.GetState{}) // answered once everything told is stored
	stored(7, "user:p1", "assistant:a1", "user:p2", "assistant:a2", "user:"+SummaryPrefix+"s1", "user:p3", "assistant:a3",
		"user:"+SummaryPrefix+"s2", "user:p4", "assistant:a4")
}
