package postgres

import (
	"context"
	"fmt"
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

// Open connects to the database at dsn (a postgres:// URL or key=value
// string; pgxpool parameters such as pool_max_conns and any runtime
// parameter such as search_path are accepted), applies pending migrations
// under an advisory lock and returns the store.
func Open(ctx context.Context, dsn string, opts ...store.Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
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
