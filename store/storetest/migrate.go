package storetest

import (
	"testing"

	"github.com/tack-run/tack/store"
)

// CheckUsersMigrated checks a store that was opened on data written by
// schema 2 (before sessions had users), holding a session "old" with model
// script:demo: the old session has no user, and a new one made with a
// user is listed as that user's. The SQLite and PostgreSQL migration tests
// share it.
func CheckUsersMigrated(t *testing.T, st store.Store) {
	t.Helper()
	snap, err := st.Get(t.Context(), "old")
	if err != nil || snap.Config.User != "" || snap.Config.Model != "script:demo" {
		t.Fatalf("old session after migration: %+v, %v", snap, err)
	}
	if err := st.Create(t.Context(), "new", store.Config{Model: "script:demo", User: "alice"}); err != nil {
		t.Fatal(err)
	}
	page, err := st.List(t.Context(), store.Page{User: "alice"})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != "new" {
		t.Fatalf("alice's sessions: %+v, %v", page, err)
	}
}
