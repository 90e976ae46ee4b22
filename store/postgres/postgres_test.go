package postgres_test

import (
	"fmt"
	"testing"

	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/postgres"
	"github.com/tack-run/tack/store/postgres/pgtest"
	"github.com/tack-run/tack/store/storetest"
)

// newStore opens a store on a schema of its own.
func newStore(tb testing.TB, opts ...store.Option) store.Store {
	return openAt(tb, pgtest.DSN(tb), opts...)
}

func openAt(tb testing.TB, dsn string, opts ...store.Option) *postgres.Store {
	tb.Helper()
	st, err := postgres.Open(tb.Context(), dsn, opts...)
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

// TestMigrate: a database an older release wrote (schema version 2,
// before sessions had users, or 3, before titles) opens with its sessions
// intact, as nobody's and untitled, and takes users and titles from then
// on.
func TestMigrate(t *testing.T) {
	for _, rw := range rewinds {
		t.Run(fmt.Sprintf("from version %d", rw.version), func(t *testing.T) {
			dsn := pgtest.DSN(t)
			old := openAt(t, dsn)
			if err := old.Create(t.Context(), "old", store.Config{Model: "script:demo"}); err != nil {
				t.Fatal(err)
			}
			for _, q := range rw.stmts {
				if _, err := postgres.Pool(old).Exec(t.Context(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if v := version(t, old); v != rw.version {
				t.Fatalf("schema version %d after the rewind, want %d", v, rw.version)
			}
			old.Close()
			st := openAt(t, dsn)
			if v := version(t, st); v != 5 {
				t.Fatalf("schema version %d after reopening, want 5", v)
			}
			storetest.CheckMigrated(t, st, func() store.Store {
				st.Close()
				return openAt(t, dsn)
			})
		})
	}
}

// version is the newest schema version the database records.
func version(t *testing.T, st *postgres.Store) int {
	t.Helper()
	var v int
	if err := postgres.Pool(st).QueryRow(t.Context(), `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
