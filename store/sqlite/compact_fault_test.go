package sqlite_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/sqlite"
)

// A compaction that fails inside its transaction — the stored messages
// from the cut on deleted, then the disk full while the summary and the
// kept messages go in — leaves the history and its start as they were:
// never a history half rewritten. Retried with space again, it lands whole.
func TestDiskFullMidCompaction(t *testing.T) {
	st := openAt(t, filepath.Join(t.TempDir(), "tack.db"))
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
	before, _ := st.Load(ctx, "s1")

	sqlite.Exec(t, st, "PRAGMA max_page_count = "+itoa(sqlite.QueryInt(t, st, "PRAGMA page_count")))
	big := strings.Repeat("x", 1<<20)
	compaction := &store.Batch{Rewrite: true, From: 4, HistoryStart: 4, Messages: []*eventsv1.Message{
		{Role: "user", Content: "summary of m0-m3", Summary: true}, old[4], {Role: "assistant", Content: big},
	}}
	err := st.Apply(ctx, "s1", compaction)
	if err == nil || !strings.Contains(err.Error(), "full") || errors.Is(err, store.ErrInvalid) {
		t.Fatalf("the compaction on a full disk: %v, want a SQLITE_FULL fault", err)
	}
	after, err := st.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if after.HistoryStart != 0 || after.MessageCount != 6 || len(after.Messages) != 6 {
		t.Fatalf("after the failed compaction: start %d, count %d, %d messages", after.HistoryStart, after.MessageCount, len(after.Messages))
	}
	for i := range old {
		if !proto.Equal(after.Messages[i], before.Messages[i]) {
			t.Fatalf("message %d after the failed compaction: %v, want %v", i, after.Messages[i], before.Messages[i])
		}
	}
	checkIntegrity(t, st)

	sqlite.Exec(t, st, "PRAGMA max_page_count = 1073741823")
	if err := st.Apply(ctx, "s1", compaction); err != nil {
		t.Fatal(err)
	}
	after, _ = st.Load(ctx, "s1")
	if after.HistoryStart != 4 || len(after.Messages) != 7 || !after.Messages[4].Summary || after.Messages[6].Content != big {
		t.Fatalf("after the retry: start %d, %d messages", after.HistoryStart, len(after.Messages))
	}
	checkIntegrity(t, st)
}
