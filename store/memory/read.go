package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/internal/codec"
)

// Get returns the record and volatile state.
func (s *Store) Get(ctx context.Context, id string) (*store.Snapshot, error) {
	var v view
	if err := s.read(id, func(e entry) error { v = e.view(id); return nil }); err != nil {
		return nil, err
	}
	r, err := v.session()
	if err != nil {
		return nil, err
	}
	snap := &store.Snapshot{Session: r.Session}
	if snap.Volatile, err = codec.DecodeVolatile(r.vol); err != nil {
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
	err := s.read(id, func(e entry) error {
		if msgs := e.messages(); from < len(msgs) {
			end := len(msgs)
			if limit > 0 {
				end = min(end, from+limit)
			}
			raw = msgs[from:end] // stored slices are never mutated
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
	var after *store.Cursor
	if p.Cursor != "" {
		c, err := store.DecodeCursor(p.Cursor)
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
	found := make([]listed, 0, len(s.sessions))
	for id, e := range s.sessions {
		if (p.User == "" || e.cfg.Value().user == p.User) && (after == nil || after.Follows(time.UnixMicro(e.updated), id)) {
			found = append(found, listed{id, e})
		}
	}
	slices.SortFunc(found, func(a, b listed) int { return b.compare(a) })
	n := p.Size()
	page := make([]view, 0, min(n, len(found)))
	for _, l := range found[:cap(page)] {
		page = append(page, l.e.view(l.id))
	}
	s.mu.RUnlock()
	out := &store.Listing{}
	for _, v := range page {
		r, err := v.session()
		if err != nil {
			return nil, err
		}
		rec := r.Session // not r's volatile state
		out.Sessions = append(out.Sessions, &rec)
	}
	if len(found) > n {
		last := out.Sessions[n-1]
		out.Next = store.EncodeCursor(store.Cursor{Updated: last.UpdatedAt, ID: last.ID})
	}
	return out, nil
}

// listed is an entry with its id, as List and Stale sort them.
type listed struct {
	id string
	e  entry
}

// compare orders l before m when it was updated earlier, ties by id.
func (l listed) compare(m listed) int {
	if c := cmp.Compare(l.e.updated, m.e.updated); c != 0 {
		return c
	}
	return cmp.Compare(l.id, m.id)
}

// Stale returns the sessions last updated before t, sub-agents aside,
// least recently updated first.
func (s *Store) Stale(ctx context.Context, t time.Time, limit int) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	var found []listed
	for id, e := range s.sessions {
		if time.UnixMicro(e.updated).Before(t) && !strings.Contains(id, "/") {
			found = append(found, listed{id, e})
		}
	}
	slices.SortFunc(found, listed.compare)
	ids := make([]string, 0, min(len(found), store.Page{Limit: limit}.Size()))
	for _, l := range found[:cap(ids)] {
		ids = append(ids, l.id)
	}
	return ids, nil
}
