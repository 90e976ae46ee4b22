// Package postgres is the PostgreSQL store.Store, for several nodes
// sharing sessions (--store postgres://...). It uses pgx with a pgxpool
// connection pool.
//
// # Usage
//
//	st, err := postgres.Open(ctx, "postgres://tack:pw@db:5432/tack?sslmode=require&pool_max_conns=32")
//	defer st.Close()
//
// Any pgx DSN parameter works; search_path picks the schema. Without
// pool_max_conns the pool holds up to 16 connections; without
// idle_in_transaction_session_timeout the server ends a connection left
// idle inside a transaction for StallTimeout (a stalled node's lock must
// not outlive its lease).
//
// Schema (migrations/*.sql, embedded, recorded in schema_migrations):
// sessions (record columns, the settings as one json column kept
// verbatim, volatile state as protobuf bytea, owner and lease_expires)
// and messages (session_id, idx, protobuf bytea; primary key
// (session_id, idx), ON DELETE CASCADE). Open applies pending migrations
// in one transaction holding pg_advisory_xact_lock keyed by the schema,
// so nodes starting together migrate once.
//
// Ownership is a lease row, not an advisory lock (which would live on one
// pooled connection and vanish with it): the owner and lease_expires
// columns of the session, changed only in a transaction that first locks
// the row with SELECT ... FOR UPDATE. Racing Acquires are serialised by
// that lock and exactly one wins; the rest get *store.OwnedError naming
// the holder. Apply takes the same row lock before writing, so a batch
// fenced with Batch.Owner cannot land after another node took the lease.
// Expiry is judged by the store's clock (WithClock), so node clocks must
// agree to well under the ttl.
//
// Apply is BEGIN; SELECT ... FOR UPDATE; one pipelined round trip
// (DELETE for a rewrite, INSERT ... SELECT FROM unnest($msgs) ON CONFLICT
// DO NOTHING, UPDATE sessions); COMMIT. Load reads record and history in
// one statement.
//
// Faults: starting a transaction and every read retry with exponential
// backoff (25 ms doubling, 6 tries) on connection failures, and the pool
// is reset when the server says it shut a connection down, so calls ride
// out a restart or failover. A failure inside a write's transaction —
// the connection dropping mid-Apply — is returned, not retried: the server
// rolls the transaction back. If it dropped during COMMIT itself the
// outcome is unknown; every batch is idempotent, so retrying it is safe.
//
// # Concurrency
//
// All methods are safe for concurrent use.
//
// # Testing
//
// Tests need a server: TACK_TEST_POSTGRES (see store/postgres/pgtest; in
// CI .ci/postgres starts one and CI=true turns a missing server into a
// failure). Each test gets its own schema. postgres_test.go runs
// store/storetest; fault_test.go kills the connection inside Apply before
// COMMIT, kills every pooled connection between calls, races Opens on a
// fresh schema and two nodes on one session, and checks the retry policy.
package postgres
