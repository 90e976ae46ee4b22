package sqlite_test

import (
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

// TestMigrateUserColumn: a file made before sessions had users (schema
// version 2) opens with its sessions intact, as nobody's, and takes users
// from then on.
func TestMigrateUserColumn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tack.db")
	old := openAt(t, path)
	if err := old.Create(t.Context(), "old", store.Config{Model: "script:demo"}); err != nil {
		t.Fatal(err)
	}
	// Back to the schema the previous release wrote.
	sqlite.Exec(t, old, `DROP INDEX sessions_by_user`)
	sqlite.Exec(t, old, `ALTER TABLE sessions DROP COLUMN user_name`)
	sqlite.Exec(t, old, `DELETE FROM schema_migrations WHERE version = 3`)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	st := openAt(t, path)
	if v := sqlite.QueryInt(t, st, `SELECT max(version) FROM schema_migrations`); v != 3 {
		t.Fatalf("schema version %d after reopening, want 3", v)
	}
	storetest.CheckUsersMigrated(t, st)
}
