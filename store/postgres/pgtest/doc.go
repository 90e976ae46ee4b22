// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema on the server named by TACK_TEST_POSTGRES, dropped when the test
// ends. It is a test kit, imported only by tests.
//
// # Usage
//
//	dsn := pgtest.DSN(t) // skips (or, with CI=true, fails) when TACK_TEST_POSTGRES is unset
//	st, err := postgres.Open(ctx, dsn)
//
// Locally, start a server with `eval "$(.ci/postgres)"`; .ci/run does the
// same, so in CI (CI=true) a missing server is a failure, never a skip.
//
// The DSN sets search_path to the new schema, so everything the store
// creates lands there and parallel or repeated tests never meet, and
// application_name to the same name, so a test can find (and kill) its
// own connections in pg_stat_activity.
//
// # Concurrency
//
// DSN is safe to call from parallel tests: schema names are random.
//
// # Testing
//
// Exercised by the store/postgres tests.
package pgtest
