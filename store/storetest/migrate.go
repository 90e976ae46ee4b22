package storetest

import (
	"testing"

	"github.com/tack-run/tack/store"
)

// CheckMigrated checks a store that was opened on data written by an
// older schema (before sessions had users, or titles), holding a session
// "old" with model script:demo: the old session has no user and no title;
// a new one made with a user is listed as that user's; a title set on the
// old session is listed, and is still there after reopen closes the store
// and opens the same database again. The SQLite and PostgreSQL migration
// tests share it.
func CheckMigrated(t *testing.T, st store.Store, reopen func() store.Store) {
	t.Helper()
	snap, err := st.Get(t.Context(), "old")
	if err != nil || snap.Config.User != "" || snap.Title != "" || snap.Config.Model != "script:demo" ||
		snap.Config.Context != nil || snap.HistoryStart != 0 {
		t.Fatalf("old session after migration: %+v, %v", snap, err)
	}
	if err := st.Create(t.Context(), "new", store.Config{Model: "script:demo", User: "alice"}); err != nil {
		t.Fatal(err)
	}
	page, err := st.List(t.Context(), store.Page{User: "alice"})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != "new" {
		t.Fatalf("alice's sessions: %+v, %v", page, err)
	}
	if err := st.Apply(t.Context(), "old", &store.Batch{Title: "Fix the build", State: "running"}); err != nil {
		t.Fatal(err)
	}
	checkTitles(t, st, "after the title was set")
	checkTitles(t, reopen(), "after reopening")
}

// checkTitles fails the test unless st lists "old" (titled "Fix the build",
// most recently updated) before "new" (untitled).
func checkTitles(t *testing.T, st store.Store, when string) {
	t.Helper()
	page, err := st.List(t.Context(), store.Page{})
	if err != nil || len(page.Sessions) != 2 {
		t.Fatalf("%s: List = %+v, %v", when, page, err)
	}
	if old, other := page.Sessions[0], page.Sessions[1]; old.ID != "old" || old.Title != "Fix the build" || old.State != "running" ||
		other.ID != "new" || other.Title != "" {
		t.Fatalf("%s: listed %+v and %+v, want old titled \"Fix the build\" then new untitled", when, old, other)
	}
	snap, err := st.Get(t.Context(), "old")
	if err != nil || snap.Title != "Fix the build" {
		t.Fatalf("%s: Get(old) = %+v, %v", when, snap, err)
	}
}
