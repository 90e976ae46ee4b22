package memory

import (
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/internal/codec"
)

// Put stores snap whole as session id, replacing what id held: its
// configuration cfg, its record (state, title, usage, event sequence,
// history start, creation and update times as snap gives them), its
// volatile state and its history. No lease is kept. It is how a runtime
// without a store parks an idle session (tack.WithPassivateAfter): the
// session is then this entry and nothing more, until Remove takes it back
// to a live session.
func (s *Store) Put(id string, cfg store.Config, snap *store.Snapshot) error {
	if err := store.CheckID(id); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	b := &store.Batch{Messages: snap.Messages, HistoryStart: snap.HistoryStart, State: snap.State, Title: snap.Title, Volatile: &snap.Volatile}
	if err := b.Validate(); err != nil {
		return err
	}
	if err := b.Start(len(snap.Messages)); err != nil {
		return err
	}
	msgs, err := codec.Messages(snap.Messages, 0)
	if err != nil {
		return err
	}
	vol, err := codec.EncodeVolatile(&snap.Volatile)
	if err != nil {
		return err
	}
	r := store.Session{State: snap.State, HistoryStart: snap.HistoryStart, Title: snap.Title, Usage: snap.Usage,
		EventSeq: snap.EventSeq, CreatedAt: snap.CreatedAt}
	rec, err := codec.EncodeRecord(&r, vol)
	if err != nil {
		return err
	}
	e := entry{rec: rec, updated: snap.UpdatedAt.UnixMicro(), cfg: intern(cfg)}
	if len(msgs) > 0 {
		e.msgs = &msgs
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	s.sessions[id] = e
	return nil
}

// Remove forgets session id alone — not its sub-agents, as Delete does —
// and reports whether it was stored.
func (s *Store) Remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[id]; !ok || s.closed {
		return false
	}
	delete(s.sessions, id)
	return true
}

// RemoveWithin forgets parent and every session within it (store.Within:
// its sub-agents), as Delete does, whether or not it holds parent.
func (s *Store) RemoveWithin(parent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeWithinLocked(parent)
}
