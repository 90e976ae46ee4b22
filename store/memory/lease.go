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
	return s.write(id, func(e *entry) error {
		if e.rec.Owner != "" && e.rec.Owner != owner && now.Before(e.rec.LeaseExpires) {
			return owned(&e.rec)
		}
		e.rec.Owner, e.rec.LeaseExpires = owner, now.Add(ttl)
		return nil
	})
}

// Renew extends owner's lease.
func (s *Store) Renew(ctx context.Context, id, owner string, ttl time.Duration) error {
	if err := store.CheckLease(owner, ttl); err != nil {
		return err
	}
	now := s.opts.Now()
	return s.write(id, func(e *entry) error {
		if e.rec.Owner != owner {
			return owned(&e.rec)
		}
		e.rec.LeaseExpires = now.Add(ttl)
		return nil
	})
}

// Release gives up owner's lease.
func (s *Store) Release(ctx context.Context, id, owner string) error {
	if err := store.CheckOwner(owner); err != nil {
		return err
	}
	return s.write(id, func(e *entry) error {
		switch e.rec.Owner {
		case "":
			return nil
		case owner:
			e.rec.Owner, e.rec.LeaseExpires = "", time.Time{}
			return nil
		}
		return owned(&e.rec)
	})
}

func owned(r *store.Session) error {
	return &store.OwnedError{Session: r.ID, Owner: r.Owner, Expires: r.LeaseExpires}
}

func notFound(id string) error { return fmt.Errorf("%w: %s", store.ErrNotFound, id) }

func gap(id string, from, count int) error {
	return fmt.Errorf("%w: session %s has %d messages, batch starts at %d", store.ErrGap, id, count, from)
}
