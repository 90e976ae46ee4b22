package postgres_test

import (
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

// TestMigrateUserColumn: a database made before sessions had users
// (schema version 2) opens with its sessions intact, as nobody's, and
// takes users from then on.
func TestMigrateUserColumn(t *testing.T) {
	dsn := pgtest.DSN(t)
	old := openAt(t, dsn)
	if err := old.Create(t.Context(), "old", store.Config{Model: "script:demo"}); err != nil {
		t.Fatal(err)
	}
	// Back to the schema the previous release wrote.
	for _, q := range []string{`DROP INDEX sessions_by_user`, `ALTER TABLE sessions DROP COLUMN user_name`,
		`DELETE FROM schema_migrations WHERE version = 3`} {
		if _, err := postgres.Pool(old).Exec(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()
	st := openAt(t, dsn)
	var v int
	if err := postgres.Pool(st).QueryRow(t.Context(), `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v != 3 {
		t.Fatalf("schema version %d (%v) after reopening, want 3", v, err)
	}
	storetest.CheckUsersMigrated(t, st)
}
