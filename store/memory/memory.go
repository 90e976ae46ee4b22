package memory

import (
	"errors"
	"sync"
	"time"
	"unique"

	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/internal/codec"
)

var errClosed = errors.New("memory store: closed")

// Store is the in-memory store.Store.
type Store struct {
	opts store.Options

	mu       sync.RWMutex
	sessions map[string]entry
	closed   bool
}

// entry is one stored session, kept small: a passivated session is its
// entry and nothing more. rec is everything but the id (the map's key),
// the configuration, the update time and the history, with the volatile
// state, encoded by codec.EncodeRecord. The record is never changed in
// place, only replaced, and a stored message never changes (appends go
// past what a reader took), so a reader may decode what it took after the
// lock.
//
// The map holds entries by value, not by pointer: an entry is then a
// slot of the map's tables, which are few large allocations, rather than
// a small object of its own. Small objects made while sessions are live
// and kept once they are passivated sit among the freed objects of those
// sessions, and hold pages the process cannot give back (issue 30,
// finding 9). A session without history, as most idle ones are, points
// to none (msgs nil), which keeps a slot at 64 bytes.
type entry struct {
	rec     []byte
	updated int64 // UpdatedAt in Unix microseconds (the clock's precision)
	cfg     unique.Handle[config]
	msgs    *[][]byte // the history, one encoded message each; nil when none
}

// messages returns the history, one encoded message each.
func (e entry) messages() [][]byte {
	if e.msgs == nil {
		return nil
	}
	return *e.msgs
}

// config is a stored configuration. Entries hold it interned
// (unique.Make): the sessions created with the same configuration, as an
// application's sessions mostly are, share one copy of it.
type config struct{ model, user, spec string }

func intern(c store.Config) unique.Handle[config] {
	return unique.Make(config{model: c.Model, user: c.User, spec: string(c.Spec)})
}

// config returns a copy of c; its settings are nil when there are none
// (as the SQL stores read them back).
func (c config) config() store.Config {
	out := store.Config{Model: c.model, User: c.user}
	if c.spec != "" {
		out.Spec = []byte(c.spec)
	}
	return out
}

// view is what a reader takes of an entry under the lock, to decode after.
type view struct {
	id string
	entry
}

func (e entry) view(id string) view { return view{id: id, entry: e} }

// record is an entry's record decoded: the session and its encoded
// volatile state.
type record struct {
	store.Session
	vol []byte
}

// record decodes v but for its configuration, which a write does not
// change through the record and need not copy.
func (v view) record() (record, error) {
	r, vol, err := codec.DecodeRecord(v.rec)
	if err != nil {
		return record{}, err
	}
	r.ID, r.MessageCount, r.UpdatedAt = v.id, len(v.messages()), time.UnixMicro(v.updated).UTC()
	return record{Session: r, vol: vol}, nil
}

// session decodes v whole, for a reader.
func (v view) session() (record, error) {
	r, err := v.record()
	r.Config = v.cfg.Value().config()
	return r, err
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New(opts ...store.Option) *Store {
	return &Store{opts: store.NewOptions(opts...), sessions: map[string]entry{}}
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
func (s *Store) read(id string, f func(e entry) error) error {
	return s.locked(id, s.mu.RLock, s.mu.RUnlock, f)
}

// write runs f with the entry of id under the write lock.
func (s *Store) write(id string, f func(e entry) error) error {
	return s.locked(id, s.mu.Lock, s.mu.Unlock, f)
}

// update runs f under the write lock with a copy of the entry of id and
// its record decoded, and stores the entry and record f returns (the
// record encoded) when f returns no error: a failed check or encoding
// changes nothing. (They go by value, not by pointer, so that they stay
// off the heap.)
func (s *Store) update(id string, f func(e entry, r record) (entry, record, error)) error {
	return s.write(id, func(e entry) error {
		r, err := e.view(id).record()
		if err != nil {
			return err
		}
		next, r, err := f(e, r)
		if err != nil {
			return err
		}
		if next.rec, err = codec.EncodeRecord(&r.Session, r.vol); err != nil {
			return err
		}
		s.sessions[id] = next
		return nil
	})
}

// locked runs f with the entry of id between lock and unlock.
func (s *Store) locked(id string, lock, unlock func(), f func(e entry) error) error {
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
