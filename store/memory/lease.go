package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/tack-run/tack/store"
)

// Acquire takes or extends the session's lease for owner.
func (s *Store) Acquire(ctx context.Context, id, owner string, ttl time.Duration) error {
	if err := store.CheckLease(owner, ttl); err != nil {
		return err
	}
	now := s.opts.Now()
	return s.update(id, func(e entry, r record) (entry, record, error) {
		if r.Owner != "" && r.Owner != owner && now.Before(r.LeaseExpires) {
			return e, r, owned(&r.Session)
		}
		r.Owner, r.LeaseExpires = owner, now.Add(ttl)
		return e, r, nil
	})
}

// Renew extends owner's lease.
func (s *Store) Renew(ctx context.Context, id, owner string, ttl time.Duration) error {
	if err := store.CheckLease(owner, ttl); err != nil {
		return err
	}
	now := s.opts.Now()
	return s.update(id, func(e entry, r record) (entry, record, error) {
		if r.Owner != owner {
			return e, r, owned(&r.Session)
		}
		r.LeaseExpires = now.Add(ttl)
		return e, r, nil
	})
}

// Release gives up owner's lease.
func (s *Store) Release(ctx context.Context, id, owner string) error {
	if err := store.CheckOwner(owner); err != nil {
		return err
	}
	return s.update(id, func(e entry, r record) (entry, record, error) {
		switch r.Owner {
		case "":
			return e, r, nil
		case owner:
			r.Owner, r.LeaseExpires = "", time.Time{}
			return e, r, nil
		}
		return e, r, owned(&r.Session)
	})
}

func owned(r *store.Session) error {
	return &store.OwnedError{Session: r.ID, Owner: r.Owner, Expires: r.LeaseExpires}
}

func notFound(id string) error { return fmt.Errorf("%w: %s", store.ErrNotFound, id) }

func gap(id string, from, count int) error {
	return fmt.Errorf("%w: session %s has %d messages, batch starts at %d", store.ErrGap, id, count, from)
}
