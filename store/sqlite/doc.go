// Package sqlite is the SQLite store.Store, the embedded default of `tack
// serve` and `tack chat` (--store sqlite:PATH). It uses modernc.org/sqlite,
// a pure-Go SQLite: no cgo.
//
// # Usage
//
//	st, err := sqlite.Open(ctx, path)      // creates the file, migrates, locks it
//	if errors.Is(err, store.ErrLocked) { ... } // another process has it
//	defer st.Close()
//
// The database runs in WAL mode with foreign keys on, busy_timeout set and
// synchronous=FULL: a commit Apply acknowledged survives a power loss, not
// only a crash of the process, which is what "an event a client saw is
// never lost" asks for. NORMAL would sync only at checkpoints and could
// lose the last commits on power loss. The sync cost is shared: see
// writes below.
//
// Schema (migrations/*.sql, embedded, recorded in schema_migrations and
// applied at Open): sessions (one row per session: record columns, the
// settings as one JSON TEXT column kept verbatim, the volatile state as a
// protobuf BLOB, the lease owner and expiry) and messages (session_id,
// idx, protobuf BLOB; primary key (session_id, idx), ON DELETE CASCADE).
// Times are Unix microseconds.
//
// One writer process: Open takes an exclusive flock (LockFileEx on
// Windows) on PATH.lock, never waiting. A second process — or a second
// Open in this one — gets store.ErrLocked naming the holder's pid, instead
// of two writers interleaving. The kernel drops the lock when the process
// dies, so a crash leaves no stale lock. The lock is on a separate file
// because closing any descriptor of the database file would drop SQLite's
// own POSIX locks.
//
// Writes: one connection, owned by a writer goroutine that commits in
// groups. Every write waiting when a transaction starts joins it in a
// savepoint of its own; the group is acknowledged after one COMMIT, so 100
// sessions committing at once share one WAL sync. A write failing its own
// checks (not found, owned, gap) rolls back to its savepoint alone; one
// hitting a database error (disk full, I/O) fails and the rest of the
// group is retried without it. Reads use a separate pool of read-only
// connections and never wait for writes (WAL); Load reads in one
// transaction, so record and history agree.
//
// Leases work as on every store (the file lock already makes the process
// the only writer, but several owners in one process, such as tests, still
// need them).
//
// # Concurrency
//
// All methods are safe for concurrent use. A write waits for its group's
// COMMIT even when its context ends meanwhile, so an error always means
// nothing of it was stored.
//
// # Testing
//
// sqlite_test.go runs store/storetest on a temporary file; lock_test.go
// re-executes the test binary as a second process (refused, and killed
// with SIGKILL while holding the file: the next Open succeeds and finds
// its commits); fault_test.go fills the disk mid-batch (max_page_count →
// SQLITE_FULL) and checks nothing of the batch landed and the file is
// intact; writer_test.go drives one commit group by hand.
package sqlite
