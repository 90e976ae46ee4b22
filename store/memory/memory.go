package memory

import (
	"errors"
	"sync"

	"github.com/tack-run/tack/store"
)

var errClosed = errors.New("memory store: closed")

// Store is the in-memory store.Store.
type Store struct {
	opts store.Options

	mu       sync.RWMutex
	sessions map[string]*entry
	closed   bool
}

// entry is one stored session; msgs and vol hold encoded bytes.
type entry struct {
	rec  store.Session
	vol  []byte
	msgs [][]byte
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New(opts ...store.Option) *Store {
	return &Store{opts: store.NewOptions(opts...), sessions: map[string]*entry{}}
}

// Close makes every later call fail; the data is dropped.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.sessions = nil
	return nil
}

// read runs f with the entry of id under the read lock.
func (s *Store) read(id string, f func(e *entry) error) error {
	return s.locked(id, s.mu.RLock, s.mu.RUnlock, f)
}

// write runs f with the entry of id under the write lock.
func (s *Store) write(id string, f func(e *entry) error) error {
	return s.locked(id, s.mu.Lock, s.mu.Unlock, f)
}

// locked runs f with the entry of id between lock and unlock.
func (s *Store) locked(id string, lock, unlock func(), f func(e *entry) error) error {
	if err := store.CheckID(id); err != nil {
		return err
	}
	lock()
	defer unlock()
	if s.closed {
		return errClosed
	}
	e, ok := s.sessions[id]
	if !ok {
		return notFound(id)
	}
	return f(e)
}
