package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tack-run/tack/store"
)

// A lease is the owner and lease_expires columns of the session row. Each
// lease call locks the row (SELECT ... FOR UPDATE), decides in Go, and
// writes the new lease in the same transaction, so racing acquirers are
// serialised by the row lock and exactly one wins. Apply takes the same
// lock, which is what makes a fenced write safe.

// lease is a session's lease columns; expires is nil when owner is "".
type lease struct {
	owner   string
	expires *time.Time
}

// Acquire takes or extends owner's lease.
func (s *Store) Acquire(ctx context.Context, id, owner string, ttl time.Duration) error {
	if err := leaseArgs(id, owner, ttl); err != nil {
		return err
	}
	return s.lease(ctx, id, func(now time.Time, cur lease) (*lease, error) {
		if cur.owner != "" && cur.owner != owner && cur.expires != nil && now.Before(*cur.expires) {
			return nil, owned(id, cur.owner, cur.expires)
		}
		return held(owner, now.Add(ttl)), nil
	})
}

// Renew extends owner's lease if owner still holds it.
func (s *Store) Renew(ctx context.Context, id, owner string, ttl time.Duration) error {
	if err := leaseArgs(id, owner, ttl); err != nil {
		return err
	}
	return s.lease(ctx, id, func(now time.Time, cur lease) (*lease, error) {
		if cur.owner != owner {
			return nil, owned(id, cur.owner, cur.expires)
		}
		return held(owner, now.Add(ttl)), nil
	})
}

// Release gives up owner's lease.
func (s *Store) Release(ctx context.Context, id, owner string) error {
	if err := store.CheckID(id); err != nil {
		return err
	}
	if err := store.CheckOwner(owner); err != nil {
		return err
	}
	return s.lease(ctx, id, func(now time.Time, cur lease) (*lease, error) {
		switch cur.owner {
		case "":
			return nil, nil // nobody holds it: nothing to do
		case owner:
			return &lease{}, nil
		}
		return nil, owned(id, cur.owner, cur.expires)
	})
}

func held(owner string, expires time.Time) *lease { return &lease{owner: owner, expires: &expires} }

// lease locks the session row, asks decide for the new lease (nil: leave
// it) and writes it.
func (s *Store) lease(ctx context.Context, id string, decide func(now time.Time, cur lease) (*lease, error)) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var cur lease
		err := tx.QueryRow(ctx, `SELECT owner, lease_expires FROM sessions WHERE id = $1 FOR UPDATE`, id).
			Scan(&cur.owner, &cur.expires)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(id)
		}
		if err != nil {
			return err
		}
		next, err := decide(s.opts.Now(), cur)
		if next == nil || err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE sessions SET owner = $2, lease_expires = $3 WHERE id = $1`, id, next.owner, next.expires)
		return err
	})
	return wrap(err)
}

func leaseArgs(id, owner string, ttl time.Duration) error {
	if err := store.CheckID(id); err != nil {
		return err
	}
	return store.CheckLease(owner, ttl)
}
