package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Retry policy: attempts and the first delay, doubled each time up to
// maxDelay (25, 50, 100, 200, 400 ms: about 0.8 s in all).
const (
	attempts   = 6
	firstDelay = 25 * time.Millisecond
	maxDelay   = time.Second
)

// retry runs f until it succeeds, fails with an error retryable does not
// accept, or attempts run out, waiting with exponential backoff between
// tries. pgxpool replaces broken connections; retry is what lets a call
// ride out a restarting server or a pool full of connections it killed.
func (s *Store) retry(ctx context.Context, retryable func(error) bool, f func() error) error {
	delay := firstDelay
	for i := 1; ; i++ {
		err := f()
		if err == nil || i == attempts || ctx.Err() != nil || !retryable(err) {
			return err
		}
		if connectionLost(err) {
			// The server shut this connection down (restart, failover,
			// pg_terminate_backend): the pool's others are likely gone too.
			s.pool.Reset()
		}
		if err := s.wait(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, maxDelay)
	}
}

// connectionError reports a failure that happened before the server did
// anything for the request: no connection, or a request that never left.
// Retrying such a failure cannot repeat an effect.
func connectionError(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || pgconn.SafeToRetry(err)
}

// connectionLost reports the server's word that the connection is gone:
// SQLSTATE class 08 (connection exception) or 57P01-57P03 (admin or crash
// shutdown, cannot connect now).
func connectionLost(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "57P01", "57P02", "57P03":
		return true
	}
	return strings.HasPrefix(pe.Code, "08")
}

// readError reports a failure a read (or BEGIN) may retry: a lost
// connection, or any failure but a context one, a store outcome, or an
// error the server answered with (bad SQL, a constraint).
func readError(err error) bool {
	if connectionLost(err) {
		return true
	}
	var pe *pgconn.PgError
	return !errors.As(err, &pe) && !errors.Is(err, context.Canceled) &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, pgx.ErrNoRows) && !isStoreError(err)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// inTx runs f in a transaction, committing when it returns nil. Only
// starting the transaction is retried (BEGIN has no effect to repeat): an
// error after that — a connection dropped mid-write — is returned, with the
// server rolling back whatever f did.
func (s *Store) inTx(ctx context.Context, f func(tx pgx.Tx) error) error {
	var tx pgx.Tx
	err := s.retry(ctx, func(err error) bool { return readError(err) || connectionError(err) }, func() error {
		var err error
		tx, err = s.pool.Begin(ctx)
		return err
	})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
