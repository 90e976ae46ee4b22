package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tack-run/tack/store"
)

// Store is the PostgreSQL store.Store. Make it with Open.
type Store struct {
	pool *pgxpool.Pool
	opts store.Options
	// wait sleeps between retries; tests replace it.
	wait func(ctx context.Context, d time.Duration) error
	// beforeCommit, when set by a test, runs inside Apply's transaction
	// just before COMMIT.
	beforeCommit func(ctx context.Context, tx pgx.Tx) error
}

var _ store.Store = (*Store)(nil)

// defaultMaxConns is the pool size when the DSN sets no pool_max_conns:
// enough for many sessions committing at once.
const defaultMaxConns = 16

// StallTimeout is how long the server lets a connection of the store sit
// idle inside a transaction before it ends that connection, rolling the
// transaction back: PostgreSQL's idle_in_transaction_session_timeout,
// unless the DSN sets it. A store's transactions never wait between
// their statements, so only a stalled process is ended — stopped, frozen
// or cut off after it locked a session's row and before its COMMIT —
// and the lock it held goes with it. Without this, such a node would
// keep every other node from taking the session's lease, or from writing
// it, for as long as it stays stalled, long after the lease expired.
const StallTimeout = 5 * time.Second

// stallParam is StallTimeout's runtime parameter.
const stallParam = "idle_in_transaction_session_timeout"

// ParseConfig parses dsn as pgxpool.ParseConfig does and sets
// StallTimeout on every connection, unless dsn sets it.
func ParseConfig(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	if _, ok := cfg.ConnConfig.RuntimeParams[stallParam]; !ok {
		cfg.ConnConfig.RuntimeParams[stallParam] = strconv.FormatInt(StallTimeout.Milliseconds(), 10)
	}
	return cfg, nil
}

// Open connects to the database at dsn (a postgres:// URL or key=value
// string; pgxpool parameters such as pool_max_conns and any runtime
// parameter such as search_path are accepted), applies pending migrations
// under an advisory lock and returns the store.
func Open(ctx context.Context, dsn string, opts ...store.Option) (*Store, error) {
	cfg, err := ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres DSN: %v", store.ErrInvalid, err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, defaultMaxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	s := &Store{pool: pool, opts: store.NewOptions(opts...), wait: sleep}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the pool, waiting for connections in use to be returned.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
