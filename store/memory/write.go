package memory

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if _, ok := s.sessions[id]; ok {
		return fmt.Errorf("%w: %s", store.ErrExists, id)
	}
	s.sessions[id] = &entry{rec: store.Session{
		ID:        id,
		Config:    cloneConfig(cfg),
		State:     "idle",
		Usage:     &eventsv1.Usage{},
		CreatedAt: now,
		UpdatedAt: now,
	}}
	return nil
}

// Apply commits b to the session atomically: everything is encoded before
// the lock is taken, and the entry is changed only once every check passed.
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
	return s.write(id, func(e *entry) error {
		if b.Owner != "" && e.rec.Owner != b.Owner {
			return owned(&e.rec)
		}
		if b.From > e.rec.MessageCount {
			return gap(id, b.From, e.rec.MessageCount)
		}
		if err := b.Start(b.Count(e.rec.MessageCount)); err != nil {
			return err
		}
		if b.Rewrite {
			e.msgs = e.msgs[:b.From:b.From]
		}
		for i, m := range msgs {
			if b.From+i >= len(e.msgs) {
				e.msgs = append(e.msgs, m)
			}
		}
		e.rec.MessageCount = len(e.msgs)
		if b.HistoryStart != 0 {
			e.rec.HistoryStart = b.HistoryStart
		}
		if b.Config != nil {
			user := e.rec.Config.User
			e.rec.Config = cloneConfig(*b.Config)
			e.rec.Config.User = user
		}
		if b.State != "" {
			e.rec.State = b.State
		}
		if b.Title != "" {
			e.rec.Title = b.Title
		}
		if b.Usage != nil {
			e.rec.Usage = proto.Clone(b.Usage).(*eventsv1.Usage)
		}
		if b.EventSeq != 0 {
			e.rec.EventSeq = b.EventSeq
		}
		if vol != nil {
			e.vol = vol
		}
		e.rec.UpdatedAt = now
		return nil
	})
}

// Delete removes the session and its sub-agents.
func (s *Store) Delete(ctx context.Context, id string) error {
	return s.write(id, func(*entry) error {
		for sid := range s.sessions {
			if store.Within(sid, id) {
				delete(s.sessions, sid)
			}
		}
		return nil
	})
}
