package memory

import (
	"context"
	"fmt"

	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/internal/codec"
)

// Create stores a new idle session.
func (s *Store) Create(ctx context.Context, id string, cfg store.Config) error {
	if err := store.CheckID(id); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	now := s.opts.Now()
	rec, err := codec.EncodeRecord(&store.Session{State: "idle", CreatedAt: now}, nil)
	if err != nil {
		return err
	}
	e := entry{rec: rec, updated: now.UnixMicro(), cfg: intern(cfg)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if _, ok := s.sessions[id]; ok {
		return fmt.Errorf("%w: %s", store.ErrExists, id)
	}
	s.sessions[id] = e
	return nil
}

// Apply commits b to the session atomically: the messages and the volatile
// state are encoded before the lock is taken, the record under it, and the
// entry is changed only once every check passed.
func (s *Store) Apply(ctx context.Context, id string, b *store.Batch) error {
	if err := b.Validate(); err != nil {
		return err
	}
	msgs, err := codec.Messages(b.Messages, b.From)
	if err != nil {
		return err
	}
	var vol []byte
	if b.Volatile != nil {
		if vol, err = codec.EncodeVolatile(b.Volatile); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.opts.Now()
	return s.update(id, func(e entry, r record) (entry, record, error) {
		if b.Owner != "" && r.Owner != b.Owner {
			return e, r, owned(&r.Session)
		}
		all := e.messages()
		if b.From > len(all) {
			return e, r, gap(id, b.From, len(all))
		}
		if err := b.Start(b.Count(len(all))); err != nil {
			return e, r, err
		}
		if b.Rewrite {
			all = all[:b.From:b.From]
		}
		for i, m := range msgs {
			if b.From+i >= len(all) {
				all = append(all, m)
			}
		}
		if b.Rewrite || len(all) != len(e.messages()) {
			e.msgs = &all
		}
		if b.SetsStart() {
			r.HistoryStart = b.HistoryStart
		}
		if b.Config != nil {
			cfg := *b.Config
			cfg.User = e.cfg.Value().user
			e.cfg = intern(cfg)
		}
		if b.State != "" {
			r.State = b.State
		}
		if b.Title != "" {
			r.Title = b.Title
		}
		if b.Usage != nil {
			r.Usage = b.Usage
		}
		if b.EventSeq != 0 {
			r.EventSeq = b.EventSeq
		}
		if vol != nil {
			r.vol = vol
		}
		e.updated = now.UnixMicro()
		return e, r, nil
	})
}

// Delete removes the session and its sub-agents.
func (s *Store) Delete(ctx context.Context, id string) error {
	return s.write(id, func(entry) error {
		s.removeWithinLocked(id)
		return nil
	})
}

// removeWithinLocked forgets parent and every session within it, with
// s.mu held.
func (s *Store) removeWithinLocked(parent string) {
	for id := range s.sessions {
		if store.Within(id, parent) {
			delete(s.sessions, id)
		}
	}
}
