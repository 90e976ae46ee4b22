package storetest

import (
	"fmt"
	"testing"

	"github.com/tack-run/tack/store"
)

// SQL is a SQL store's database as the migration test reaches it.
type SQL struct {
	// Open opens a store on the database, the same one each time.
	Open func(t *testing.T) store.Store
	// Exec runs a statement on the store's database.
	Exec func(t *testing.T, st store.Store, query string)
	// Version is the newest schema version the store's database records.
	Version func(t *testing.T, st store.Store) int
}

// rewinds are the statements that take the schema back to what an older
// release wrote, by the version it was at; SQLite and PostgreSQL take the
// same ones.
var rewinds = []struct {
	version int
	stmts   []string
}{
	{6, []string{ // before queue modes
		`ALTER TABLE sessions DROP COLUMN queue_mode`,
		`DELETE FROM schema_migrations WHERE version = 7`,
	}},
	{5, []string{ // before sub-agent options
		`ALTER TABLE sessions DROP COLUMN queue_mode`,
		`ALTER TABLE sessions DROP COLUMN subagents`,
		`DELETE FROM schema_migrations WHERE version >= 6`,
	}},
	{4, []string{ // before context options and compaction
		`ALTER TABLE sessions DROP COLUMN queue_mode`,
		`ALTER TABLE sessions DROP COLUMN subagents`,
		`ALTER TABLE sessions DROP COLUMN context`,
		`ALTER TABLE sessions DROP COLUMN history_start`,
		`DELETE FROM schema_migrations WHERE version >= 5`,
	}},
	{3, []string{ // before titles
		`ALTER TABLE sessions DROP COLUMN queue_mode`,
		`ALTER TABLE sessions DROP COLUMN subagents`,
		`ALTER TABLE sessions DROP COLUMN context`,
		`ALTER TABLE sessions DROP COLUMN history_start`,
		`ALTER TABLE sessions DROP COLUMN title`,
		`DELETE FROM schema_migrations WHERE version >= 4`,
	}},
	{2, []string{ // before users
		`ALTER TABLE sessions DROP COLUMN queue_mode`,
		`ALTER TABLE sessions DROP COLUMN subagents`,
		`ALTER TABLE sessions DROP COLUMN context`,
		`ALTER TABLE sessions DROP COLUMN history_start`,
		`ALTER TABLE sessions DROP COLUMN title`,
		`DROP INDEX sessions_by_user`,
		`ALTER TABLE sessions DROP COLUMN user_name`,
		`DELETE FROM schema_migrations WHERE version >= 3`,
	}},
}

// RunMigrate checks that a database an older release wrote (schema
// version 2, before sessions had users; 3, before titles; 4, before
// context options; 5, before sub-agent options; 6, before queue modes) opens at the newest version with its sessions intact,
// as nobody's and untitled, and takes users and titles from then on
// (CheckMigrated). newDB gives each case a database of its own.
func RunMigrate(t *testing.T, newDB func(t *testing.T) SQL) {
	for _, rw := range rewinds {
		t.Run(fmt.Sprintf("from version %d", rw.version), func(t *testing.T) {
			db := newDB(t)
			old := db.Open(t)
			newest := db.Version(t, old)
			if err := old.Create(t.Context(), "old", store.Config{Model: "script:demo"}); err != nil {
				t.Fatal(err)
			}
			for _, q := range rw.stmts {
				db.Exec(t, old, q)
			}
			if v := db.Version(t, old); v != rw.version {
				t.Fatalf("schema version %d after the rewind, want %d", v, rw.version)
			}
			if err := old.Close(); err != nil {
				t.Fatal(err)
			}
			st := db.Open(t)
			if v := db.Version(t, st); v != newest {
				t.Fatalf("schema version %d after reopening, want %d", v, newest)
			}
			CheckMigrated(t, st, func() store.Store {
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
				return db.Open(t)
			})
		})
	}
}

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
		snap.Config.Context != nil || snap.HistoryStart != 0 || snap.Config.Subagents != nil || snap.Config.QueueMode != "" {
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
