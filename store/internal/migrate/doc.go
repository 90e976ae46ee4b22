// Package migrate reads a store's versioned schema migrations from an
// embedded file system. Each implementation applies them in its own SQL
// dialect, recording each version in its schema_migrations table.
//
// # Usage
//
// Migrations are files named NNNN_name.sql (NNNN a positive version,
// unique, applied in ascending order, in transactions — SQLite one per
// migration, PostgreSQL all pending ones together):
//
//	//go:embed migrations/*.sql
//	var files embed.FS
//	ms, err := migrate.Load(files, "migrations")
//	pending := migrate.Pending(ms, applied) // applied: versions already recorded
//
// A migration, once released, is never edited: a change is a new file.
//
// # Concurrency
//
// Load and Pending are pure. Serialising concurrent Opens is the caller's
// job (an advisory lock on PostgreSQL, the file lock on SQLite).
//
// # Testing
//
// Table tests with fstest.MapFS in this package; the stores' own tests
// open the same database twice to check idempotency.
package migrate
