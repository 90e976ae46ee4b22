package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/sqlite"
)

func checkIntegrity(t *testing.T, st *sqlite.Store) {
	t.Helper()
	if got := sqlite.QueryString(t, st, "PRAGMA integrity_check"); got != "ok" {
		t.Fatalf("integrity_check: %s", got)
	}
	if got := sqlite.QueryInt(t, st, "SELECT count(*) FROM pragma_foreign_key_check"); got != 0 {
		t.Fatalf("%d foreign key violations", got)
	}
}

// A full disk (simulated with max_page_count, which makes SQLite fail with
// SQLITE_FULL exactly as when the file cannot grow) fails the batch in the
// middle — after the session row was read and small messages inserted —
// and leaves the stored session as it was.
func TestDiskFullMidBatch(t *testing.T) {
	st := openAt(t, filepath.Join(t.TempDir(), "tack.db"))
	ctx := t.Context()
	if err := st.Create(ctx, "s1", store.Config{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	first := []*eventsv1.Message{{Role: "user", Content: "hello"}}
	if err := st.Apply(ctx, "s1", &store.Batch{Messages: first, State: "idle", Volatile: &store.Volatile{PromptQueue: []string{"q"}}}); err != nil {
		t.Fatal(err)
	}
	before, _ := st.Load(ctx, "s1")

	pages := sqlite.QueryInt(t, st, "PRAGMA page_count")
	sqlite.Exec(t, st, "PRAGMA max_page_count = "+itoa(pages))
	big := strings.Repeat("x", 1<<20)
	batch := &store.Batch{From: 1, State: "running", Usage: &eventsv1.Usage{TotalTokens: 9},
		Volatile: &store.Volatile{}, Messages: []*eventsv1.Message{
			{Role: "assistant", Content: "small"}, {Role: "tool", Content: big}, {Role: "user", Content: "after"},
		}}
	err := st.Apply(ctx, "s1", batch)
	if err == nil || !strings.Contains(err.Error(), "full") || errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Apply on a full disk: %v, want a SQLITE_FULL fault", err)
	}
	t.Logf("full disk: %v", err)
	after, err := st.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if after.MessageCount != 1 || len(after.Messages) != 1 || after.State != "idle" ||
		len(after.Volatile.PromptQueue) != 1 || !proto.Equal(after.Usage, before.Usage) {
		t.Fatalf("after the failed batch: %+v", after)
	}
	checkIntegrity(t, st)

	// Space again: the same batch is retried and lands whole.
	sqlite.Exec(t, st, "PRAGMA max_page_count = 1073741823")
	if err := st.Apply(ctx, "s1", batch); err != nil {
		t.Fatal(err)
	}
	after, _ = st.Load(ctx, "s1")
	if len(after.Messages) != 4 || after.Messages[2].Content != big || after.State != "running" {
		t.Fatalf("after the retry: %d messages, state %s", len(after.Messages), after.State)
	}
	checkIntegrity(t, st)
}

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	// '?', '#' and '%' in the path must not be read as URI syntax.
	path := filepath.Join(t.TempDir(), "odd ?name#50%.db")
	ctx := t.Context()
	st := openAt(t, path)
	if err := st.Create(ctx, "s1", store.Config{Model: "m", Spec: []byte(`{"tools":["shell"]}`)}); err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(ctx, "s1", &store.Batch{Messages: []*eventsv1.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the path given: %v", err)
	}
	for range 2 {
		st = openAt(t, path)
		snap, err := st.Load(ctx, "s1")
		if err != nil || len(snap.Messages) != 1 || string(snap.Config.Spec) != `{"tools":["shell"]}` {
			t.Fatalf("after reopen: %+v, %v", snap, err)
		}
		if n, want := sqlite.QueryInt(t, st, "SELECT count(*) FROM schema_migrations"), migrationFiles(t); n != want {
			t.Fatalf("%d migrations recorded, want %d", n, want)
		}
		if mode := sqlite.QueryString(t, st, "PRAGMA journal_mode"); mode != "wal" {
			t.Fatalf("journal_mode %s, want wal", mode)
		}
		st.Close()
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tack.db")
	st := openAt(t, path)
	sqlite.Exec(t, st, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)")
	st.Close()
	_, err := sqlite.Open(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
	if _, err := sqlite.Open(t.Context(), path); err == nil || errors.Is(err, store.ErrLocked) {
		t.Fatalf("a failed Open kept the lock: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct{ name, path string }{
		{"empty path", ""},
		{"missing directory", filepath.Join(t.TempDir(), "no", "such", "dir", "tack.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sqlite.Open(t.Context(), tc.path); err == nil || errors.Is(err, store.ErrLocked) {
				t.Fatalf("Open(%q) = %v", tc.path, err)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tack.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := st.Create(t.Context(), "s1", store.Config{}); err == nil {
		t.Fatal("Create after Close succeeded")
	}
	if _, err := st.Get(t.Context(), "s1"); err == nil {
		t.Fatal("Get after Close succeeded")
	}
}

// migrationFiles counts the embedded migrations: each is recorded once.
func migrationFiles(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found: %v", err)
	}
	return len(files)
}
