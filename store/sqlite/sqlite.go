package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/tack-run/tack/store"
)

// Store is the SQLite store.Store. Make it with Open.
type Store struct {
	path string
	opts store.Options
	lock *fileLock
	wdb  *sql.DB // one connection: every write, through w
	rdb  *sql.DB // a pool of read-only connections
	w    *writer

	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*Store)(nil)

// Settings shared by every connection. synchronous=FULL syncs the WAL at
// every commit, so a commit that Apply acknowledged survives power loss as
// well as a crash of the process: "an event a client saw is never lost".
// Group commit (see writer) pays that sync once for many sessions.
// secure_delete=ON overwrites deleted content with zeros, so the text of a
// deleted session is gone from the file once the WAL is checkpointed (at
// the latest when the store closes).
const pragmas = "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=secure_delete(1)"

// Open opens (creating it if needed) the database file at path, locks it
// for this process, applies pending migrations and starts the writer. When
// another process holds the file, Open fails with store.ErrLocked. The
// parent directory must exist.
func Open(ctx context.Context, path string, opts ...store.Option) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty SQLite path", store.ErrInvalid)
	}
	lock, err := acquireLock(path)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, opts: store.NewOptions(opts...), lock: lock}
	if err := s.open(ctx); err != nil {
		s.closeDBs()
		lock.release()
		return nil, err
	}
	s.w = startWriter(s.wdb)
	return s, nil
}

func (s *Store) open(ctx context.Context) error {
	var err error
	if s.wdb, err = sql.Open("sqlite", dsn(s.path, "_txlock=immediate")); err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	if err := s.wdb.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite store: opening %s: %w", s.path, err)
	}
	if err := migrate(ctx, s.wdb, s.opts.Now()); err != nil {
		return err
	}
	if s.rdb, err = sql.Open("sqlite", dsn(s.path, "_pragma=query_only(1)")); err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	s.rdb.SetMaxOpenConns(n)
	s.rdb.SetMaxIdleConns(n)
	return nil
}

// dsn is the driver's name for the file at path with the shared pragmas
// and extra parameters. The path is a SQLite URI, so '%', '?' and '#' in it
// are escaped.
func dsn(path, extra string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + "?" + pragmas + "&" + extra
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close stops the writer (waiting for the group being committed), closes
// the database and releases the file lock. Later calls return the same.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.w.close()
		s.closeErr = errors.Join(s.closeDBs(), s.lock.release())
	})
	return s.closeErr
}

func (s *Store) closeDBs() error {
	var errs []error
	for _, db := range []*sql.DB{s.rdb, s.wdb} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}
