// Package open turns a --store value
// (docs/protocol.md#configuration-and-storage) into a store.Store:
//
//	memory                         store/memory: nothing survives the process
//	sqlite:PATH                    store/sqlite at PATH ("sqlite:" or "sqlite" alone: DefaultSQLitePath)
//	postgres://... postgresql://...  store/postgres with that DSN
//
// It is its own package because store cannot import its implementations.
//
// # Usage
//
//	st, err := open.Open(ctx, flagStore)          // errors.Is(err, store.ErrLocked) when another process has the SQLite file
//	defer st.Close()
//
// `serve` and `chat` default to "sqlite:" + DefaultSQLitePath(); `rpc`
// and `demo` to "memory".
//
// # Concurrency
//
// Open and DefaultSQLitePath are safe for concurrent use; the store
// returned is too.
//
// # Testing
//
// open_test.go covers every form with a table, against SQLite in a
// temporary directory and against the PostgreSQL of TACK_TEST_POSTGRES.
package open
