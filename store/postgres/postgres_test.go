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
