package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Test hooks.
var (
	ConnectionError = connectionError
	ReadError       = readError
)

// SetBeforeCommit makes Apply run f inside its transaction before COMMIT.
func SetBeforeCommit(s *Store, f func(ctx context.Context, tx pgx.Tx) error) { s.beforeCommit = f }

// SetWait replaces the backoff sleep.
func SetWait(s *Store, f func(ctx context.Context, d time.Duration) error) { s.wait = f }

// Pool is the store's connection pool.
func Pool(s *Store) *pgxpool.Pool { return s.pool }

// Retry runs s.retry.
func Retry(s *Store, ctx context.Context, retryable func(error) bool, f func() error) error {
	return s.retry(ctx, retryable, f)
}
