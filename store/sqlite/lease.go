package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tack-run/tack/store"
)

// Acquire takes or extends owner's lease with a conditional UPDATE.
func (s *Store) Acquire(ctx context.Context, id, owner string, ttl time.Duration) error {
	if err := leaseArgs(id, owner, ttl); err != nil {
		return err
	}
	return s.w.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := s.opts.Now()
		return s.lease(ctx, tx, id,
			`UPDATE sessions SET owner = ?, lease_expires = ? WHERE id = ? AND (owner IN ('', ?) OR lease_expires <= ?)`,
			owner, now.Add(ttl).UnixMicro(), id, owner, now.UnixMicro())
	})
}

// Renew extends owner's lease if owner still holds it.
func (s *Store) Renew(ctx context.Context, id, owner string, ttl time.Duration) error {
	if err := leaseArgs(id, owner, ttl); err != nil {
		return err
	}
	return s.w.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return s.lease(ctx, tx, id, `UPDATE sessions SET lease_expires = ? WHERE id = ? AND owner = ?`,
			s.opts.Now().Add(ttl).UnixMicro(), id, owner)
	})
}

// Release gives up owner's lease.
func (s *Store) Release(ctx context.Context, id, owner string) error {
	if err := leaseArgs(id, owner, time.Second); err != nil {
		return err
	}
	return s.w.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		err := s.lease(ctx, tx, id, `UPDATE sessions SET owner = '', lease_expires = 0 WHERE id = ? AND owner = ?`, id, owner)
		if oe := (*store.OwnedError)(nil); errors.As(err, &oe) && oe.Owner == "" {
			return nil // nobody holds it: nothing to release
		}
		return err
	})
}

// lease runs a conditional lease UPDATE; when it changes no row it says
// why: no such session, or the current holder.
func (s *Store) lease(ctx context.Context, tx *sql.Tx, id, update string, args ...any) error {
	res, err := tx.ExecContext(ctx, update, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	var holder string
	var expires int64
	err = tx.QueryRowContext(ctx, `SELECT owner, lease_expires FROM sessions WHERE id = ?`, id).Scan(&holder, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(id)
	}
	if err != nil {
		return err
	}
	return owned(id, holder, expires)
}

func leaseArgs(id, owner string, ttl time.Duration) error {
	if err := store.CheckID(id); err != nil {
		return err
	}
	return store.CheckLease(owner, ttl)
}
