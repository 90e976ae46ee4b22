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

// TestMigrate: a file an older release wrote opens with its sessions
// intact (storetest.RunMigrate).
func TestMigrate(t *testing.T) {
	storetest.RunMigrate(t, func(t *testing.T) storetest.SQL {
		path := filepath.Join(t.TempDir(), "tack.db")
		return storetest.SQL{
			Open: func(t *testing.T) store.Store { return openAt(t, path) },
			Exec: func(t *testing.T, st store.Store, q string) { sqlite.Exec(t, st.(*sqlite.Store), q) },
			Version: func(t *testing.T, st store.Store) int {
				return sqlite.QueryInt(t, st.(*sqlite.Store), `SELECT max(version) FROM schema_migrations`)
			},
		}
	})
}
