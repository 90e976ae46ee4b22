package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/sqlite"
	"github.com/tack-run/tack/store/storetest"
)

// newStore opens a store on a new file in a temporary directory.
func newStore(tb testing.TB, opts ...store.Option) store.Store {
	return openAt(tb, filepath.Join(tb.TempDir(), "tack.db"), opts...)
}

func openAt(tb testing.TB, path string, opts ...store.Option) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(tb.Context(), path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

func TestConformance(t *testing.T) { storetest.Run(t, newStore) }

// rewinds are the statements that take the schema back to what an older
// release wrote, by the version it was at.
var rewinds = []struct {
	version int
	stmts   []string
}{
	{4, []string{ // before context options and compaction
		`ALTER TABLE sessions DROP COLUMN context`,
		`ALTER TABLE sessions DROP COLUMN history_start`,
		`DELETE FROM schema_migrations WHERE version = 5`,
	}},
	{3, []string{ // before titles
		`ALTER TABLE sessions DROP COLUMN context`,
		`ALTER TABLE sessions DROP COLUMN history_start`,
		`ALTER TABLE sessions DROP COLUMN title`,
		`DELETE FROM schema_migrations WHERE version >= 4`,
	}},
	{2, []string{ // before users
		`ALTER TABLE sessions DROP COLUMN context`,
		`ALTER TABLE sessions DROP COLUMN history_start`,
		`ALTER TABLE sessions DROP COLUMN title`,
		`DROP INDEX sessions_by_user`,
		`ALTER TABLE sessions DROP COLUMN user_name`,
		`DELETE FROM schema_migrations WHERE version >= 3`,
	}},
}

// TestMigrate: a file an older release wrote (schema version 2, before
// sessions had users, 3, before titles, or 4, before context options) opens with its sessions intact,
// as nobody's and untitled, and takes users and titles from then on.
func TestMigrate(t *testing.T) {
	for _, rw := range rewinds {
		t.Run(fmt.Sprintf("from version %d", rw.version), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tack.db")
			old := openAt(t, path)
			if err := old.Create(t.Context(), "old", store.Config{Model: "script:demo"}); err != nil {
				t.Fatal(err)
			}
			for _, q := range rw.stmts {
				sqlite.Exec(t, old, q)
			}
			if v := sqlite.QueryInt(t, old, `SELECT max(version) FROM schema_migrations`); v != rw.version {
				t.Fatalf("schema version %d after the rewind, want %d", v, rw.version)
			}
			if err := old.Close(); err != nil {
				t.Fatal(err)
			}
			st := openAt(t, path)
			if v := sqlite.QueryInt(t, st, `SELECT max(version) FROM schema_migrations`); v != 5 {
				t.Fatalf("schema version %d after reopening, want 5", v)
			}
			storetest.CheckMigrated(t, st, func() store.Store {
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
				return openAt(t, path)
			})
		})
	}
}
