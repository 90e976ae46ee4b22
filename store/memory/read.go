package memory

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/internal/codec"
)

// Get returns the record and volatile state.
func (s *Store) Get(ctx context.Context, id string) (*store.Snapshot, error) {
	var snap *store.Snapshot
	var vol []byte
	err := s.read(id, func(e *entry) error {
		snap = &store.Snapshot{Session: cloneSession(&e.rec)}
		vol = e.vol
		return nil
	})
	if err != nil {
		return nil, err
	}
	if snap.Volatile, err = codec.DecodeVolatile(vol); err != nil {
		return nil, err
	}
	return snap, nil
}

// Load returns the record, volatile state and history.
func (s *Store) Load(ctx context.Context, id string) (*store.Snapshot, error) {
	snap, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if snap.Messages, err = s.Messages(ctx, id, 0, 0); err != nil {
		return nil, err
	}
	return snap, nil
}

// Messages returns a page of the history.
func (s *Store) Messages(ctx context.Context, id string, from, limit int) ([]*eventsv1.Message, error) {
	if from < 0 {
		return nil, fmt.Errorf("%w: negative message index %d", store.ErrInvalid, from)
	}
	var raw [][]byte
	err := s.read(id, func(e *entry) error {
		if from < len(e.msgs) {
			end := len(e.msgs)
			if limit > 0 {
				end = min(end, from+limit)
			}
			raw = e.msgs[from:end] // stored slices are never mutated
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*eventsv1.Message, len(raw))
	for i, b := range raw {
		if out[i], err = codec.DecodeMessage(b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// List returns a page of records, most recently updated first.
func (s *Store) List(ctx context.Context, p store.Page) (*store.Listing, error) {
	var after *codec.Cursor
	if p.Cursor != "" {
		c, err := codec.DecodeCursor(p.Cursor)
		if err != nil {
			return nil, err
		}
		after = &c
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, errClosed
	}
	recs := make([]*store.Session, 0, len(s.sessions))
	for _, e := range s.sessions {
		if (p.User == "" || e.rec.Config.User == p.User) && (after == nil || before(&e.rec, *after)) {
			recs = append(recs, &e.rec)
		}
	}
	slices.SortFunc(recs, func(a, b *store.Session) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	out := &store.Listing{}
	n := p.Size()
	for i, r := range recs {
		if i == n {
			last := out.Sessions[n-1]
			out.Next = codec.EncodeCursor(codec.Cursor{Updated: last.UpdatedAt, ID: last.ID})
			break
		}
		c := cloneSession(r)
		out.Sessions = append(out.Sessions, &c)
	}
	s.mu.RUnlock()
	return out, nil
}

// before reports whether r comes after cursor c in (updated desc, id desc)
// order.
func before(r *store.Session, c codec.Cursor) bool {
	if !r.UpdatedAt.Equal(c.Updated) {
		return r.UpdatedAt.Before(c.Updated)
	}
	return r.ID < c.ID
}

func cloneSession(r *store.Session) store.Session {
	c := *r
	c.Config = cloneConfig(r.Config)
	c.Usage = proto.Clone(r.Usage).(*eventsv1.Usage)
	return c
}

// cloneConfig copies c; its settings are nil when there are none (as the
// SQL stores read them back).
func cloneConfig(c store.Config) store.Config {
	if len(c.Spec) == 0 {
		c.Spec = nil
	} else {
		c.Spec = bytes.Clone(c.Spec)
	}
	return c
}

// Stale returns the sessions last updated before t, sub-agents aside,
// least recently updated first.
func (s *Store) Stale(ctx context.Context, t time.Time, limit int) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	var recs []*store.Session
	for _, e := range s.sessions {
		if e.rec.UpdatedAt.Before(t) && !strings.Contains(e.rec.ID, "/") {
			recs = append(recs, &e.rec)
		}
	}
	slices.SortFunc(recs, func(a, b *store.Session) int {
		if c := a.UpdatedAt.Compare(b.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	ids := make([]string, 0, min(len(recs), store.Page{Limit: limit}.Size()))
	for _, r := range recs[:min(len(recs), cap(ids))] {
		ids = append(ids, r.ID)
	}
	return ids, nil
}
