package store

import (
	"context"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Store keeps sessions, their committed histories and volatile state, and
// who owns each. Implementations: store/memory, store/sqlite,
// store/postgres; store/open picks one from a --store value.
//
// Every method is safe for concurrent use. Errors wrap ErrNotFound,
// ErrExists, ErrOwned, ErrGap or ErrInvalid when those apply; any other
// error is a fault (I/O, full disk, lost connection) after which the stored
// data is as it was before the failed call — or, when the connection
// dropped while committing, possibly as after it: a write's effect is
// all-or-nothing and every write is safe to retry.
type Store interface {
	// Create stores a new idle session with an empty history. It fails with
	// ErrExists when the id is taken.
	Create(ctx context.Context, id string, cfg Config) error

	// Apply commits b to the session in one transaction and returns once
	// it is durable, so the caller may then announce it (message_committed).
	Apply(ctx context.Context, id string, b *Batch) error

	// Get returns the session's record and volatile state, without its
	// history (get_state for a session that is not loaded).
	Get(ctx context.Context, id string) (*Snapshot, error)

	// Load returns the session's record, volatile state and whole history:
	// what a restore needs.
	Load(ctx context.Context, id string) (*Snapshot, error)

	// Messages returns up to limit messages of the history from index from
	// (limit <= 0: all the rest). A from past the end returns none.
	Messages(ctx context.Context, id string, from, limit int) ([]*eventsv1.Message, error)

	// List returns a page of session records (of one user when p.User is
	// set), most recently updated first
	// (ties by id, descending), without histories. A session updated while
	// a caller pages moves to the front and may be missed or seen twice.
	List(ctx context.Context, p Page) (*Listing, error)

	// Delete removes the session, its history and its lease, and with them
	// every session whose id starts with id + "/" (its sub-agents, at any
	// depth), in one transaction. It fails with ErrNotFound when id is not
	// stored (its sub-agents, if any, are then left alone).
	Delete(ctx context.Context, id string) error

	// Stale returns the ids of up to limit sessions whose UpdatedAt is
	// before t, sub-agents (ids holding "/") aside, least recently
	// updated first: what a retention sweep deletes. limit <= 0 means
	// DefaultPageSize.
	Stale(ctx context.Context, before time.Time, limit int) ([]string, error)

	// Acquire makes owner the holder of the session's lease until ttl from
	// now. It succeeds when nobody holds the lease, when owner already does
	// (extending it), or when the holder's lease has expired; otherwise it
	// fails with an *OwnedError (ErrOwned) naming the holder.
	Acquire(ctx context.Context, id, owner string, ttl time.Duration) error

	// Renew extends owner's lease to ttl from now. It fails with ErrOwned
	// when owner no longer holds the lease (another owner acquired it after
	// it expired, or it was released); an expired lease nobody took is
	// renewed.
	Renew(ctx context.Context, id, owner string, ttl time.Duration) error

	// Release gives up owner's lease. Releasing a lease nobody holds is a
	// no-op; releasing another owner's fails with ErrOwned.
	Release(ctx context.Context, id, owner string) error

	// Close releases the store's resources (and the SQLite file lock).
	Close() error
}

// Page asks List for one page.
type Page struct {
	// Limit is the page size: DefaultPageSize when <= 0, at most MaxPageSize.
	Limit int
	// Cursor is the Next of the previous page; empty for the first page.
	Cursor string
	// User, when not empty, lists only the sessions whose Config.User it
	// is; empty lists every session.
	User string
}

// Page sizes for List.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// Size is the page size List uses for p.
func (p Page) Size() int {
	switch {
	case p.Limit <= 0:
		return DefaultPageSize
	case p.Limit > MaxPageSize:
		return MaxPageSize
	}
	return p.Limit
}

// Listing is one page of List.
type Listing struct {
	// Sessions are the page's records.
	Sessions []*Session
	// Next is the cursor of the next page, empty after the last one.
	Next string
}
