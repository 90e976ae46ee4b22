package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/postgres"
	"github.com/tack-run/tack/store/postgres/pgtest"
)

// A connection that drops inside a compaction's transaction — after the
// kept messages were deleted, the summary and the kept ones inserted and
// the history's start moved, before COMMIT — leaves the history and its
// start as they were; the retry lands whole.
func TestDroppedConnectionMidCompaction(t *testing.T) {
	st := openAt(t, pgtest.DSN(t))
	ctx := t.Context()
	if err := st.Create(ctx, "s1", store.Config{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	var old []*eventsv1.Message
	for i := range 6 {
		old = append(old, &eventsv1.Message{Role: []string{"user", "assistant"}[i%2], Content: fmt.Sprint("m", i)})
	}
	if err := st.Apply(ctx, "s1", &store.Batch{Messages: old}); err != nil {
		t.Fatal(err)
	}
	postgres.SetBeforeCommit(st, func(ctx context.Context, tx pgx.Tx) error {
		postgres.SetBeforeCommit(st, nil)
		if n := terminate(t, `pid = $1`, tx.Conn().PgConn().PID()); n != 1 {
			t.Errorf("terminated %d backends", n)
		}
		return nil
	})
	working := []*eventsv1.Message{{Role: "user", Content: "summary of m0-m3", Summary: true}, old[4], old[5]}
	compaction := &store.Batch{Rewrite: true, From: 4, HistoryStart: 4, Messages: working}
	err := st.Apply(ctx, "s1", compaction)
	if err == nil || errors.Is(err, store.ErrInvalid) {
		t.Fatalf("the compaction over a dropped connection: %v, want a connection fault", err)
	}
	snap, err := st.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if snap.HistoryStart != 0 || snap.MessageCount != 6 || len(snap.Messages) != 6 {
		t.Fatalf("after the dropped compaction: start %d, count %d, %d messages", snap.HistoryStart, snap.MessageCount, len(snap.Messages))
	}
	for i := range old {
		if !proto.Equal(snap.Messages[i], old[i]) {
			t.Fatalf("message %d after the dropped compaction: %v, want %v", i, snap.Messages[i], old[i])
		}
	}
	if err := st.Apply(ctx, "s1", compaction); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	snap, _ = st.Load(ctx, "s1")
	if snap.HistoryStart != 4 || len(snap.Messages) != 7 || !proto.Equal(snap.Messages[4], working[0]) {
		t.Fatalf("after the retry: start %d, %d messages", snap.HistoryStart, len(snap.Messages))
	}
}
