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

// TestMigrate: a database an older release wrote opens with its sessions
// intact (storetest.RunMigrate).
func TestMigrate(t *testing.T) {
	storetest.RunMigrate(t, func(t *testing.T) storetest.SQL {
		dsn := pgtest.DSN(t)
		return storetest.SQL{
			Open: func(t *testing.T) store.Store { return openAt(t, dsn) },
			Exec: func(t *testing.T, st store.Store, q string) {
				if _, err := postgres.Pool(st.(*postgres.Store)).Exec(t.Context(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			},
			Version:  func(t *testing.T, st store.Store) int { return version(t, st.(*postgres.Store)) },
			Postgres: true,
		}
	})
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
