package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tack-run/tack/store"
)

// maxGroup bounds how many writes share one transaction.
const maxGroup = 128

var errClosed = errors.New("sqlite store: closed")

// op is one write: it runs inside a transaction it shares with other
// writes. It returns a store error (ErrNotFound, ErrOwned, ...) after
// checks that precede its first change, and any other error only from the
// database.
type op func(ctx context.Context, tx *sql.Tx) error

type request struct {
	ctx  context.Context
	op   op
	done chan error
}

// writer is the goroutine that owns the write connection and commits
// writes in groups: every request waiting when a transaction starts joins
// it, each in a savepoint, and all are acknowledged after the one COMMIT —
// one WAL sync for the whole group. A request that fails alone is rolled
// back to its savepoint without touching the others. A database error
// (disk full, I/O) fails the request that hit it and the group is retried
// without it; a failed COMMIT fails the whole group. Either way nothing of
// a failed request is stored.
type writer struct {
	db   *sql.DB
	reqs chan *request // unbuffered: a request is either taken or refused
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func startWriter(db *sql.DB) *writer {
	w := &writer{db: db, reqs: make(chan *request), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// do runs o in the next group and returns its outcome once the group has
// committed (or o failed). It waits for the outcome even when ctx ends
// meanwhile, so an error always means o's changes are not stored.
func (w *writer) do(ctx context.Context, o op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &request{ctx: ctx, op: o, done: make(chan error, 1)}
	select {
	case w.reqs <- r:
	case <-w.stop:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-r.done
}

func (w *writer) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func (w *writer) run() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		case r := <-w.reqs:
			group := []*request{r}
		more:
			for len(group) < maxGroup {
				select {
				case r := <-w.reqs:
					group = append(group, r)
				default:
					break more
				}
			}
			w.commit(group)
		}
	}
}

// commit runs group in one transaction and answers every request.
func (w *writer) commit(group []*request) {
	for len(group) > 0 {
		results, failed, err := w.try(group)
		switch {
		case failed >= 0:
			group[failed].done <- err
			group = slices.Delete(group, failed, failed+1)
			continue
		case err != nil:
			for _, r := range group {
				r.done <- err
			}
		default:
			for i, r := range group {
				r.done <- results[i]
			}
		}
		return
	}
}

// try runs group in one transaction. It returns each request's outcome
// when the transaction committed; err alone when it could not begin or
// commit (nothing stored); and the index of a request that hit a database
// error, with that error, when the transaction was rolled back and the
// other requests must be tried again.
func (w *writer) try(group []*request) (results []error, failed int, err error) {
	// The transaction outlives any one request's context; each statement
	// runs under its request's context.
	tx, err := w.db.BeginTx(context.Background(), nil)
	if err != nil {
		return nil, -1, fmt.Errorf("sqlite store: begin: %w", err)
	}
	results = make([]error, len(group))
	for i, r := range group {
		if results[i] = r.ctx.Err(); results[i] != nil {
			continue
		}
		if err := w.savepoint(tx, r, &results[i]); err != nil {
			tx.Rollback() // SQLite may have rolled back already
			return nil, i, fmt.Errorf("sqlite store: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, -1, fmt.Errorf("sqlite store: commit: %w", err)
	}
	return results, -1, nil
}

// savepoint runs r in its own savepoint of tx, rolling back to it when r
// fails its own checks (the outcome goes to *result). An error return is a
// database error: the transaction is no longer usable.
func (w *writer) savepoint(tx *sql.Tx, r *request, result *error) error {
	if _, err := tx.ExecContext(r.ctx, "SAVEPOINT w"); err != nil {
		return err
	}
	err := r.op(r.ctx, tx)
	if err != nil && !isStoreError(err) {
		return err
	}
	if *result = err; err != nil {
		if _, err := tx.ExecContext(context.Background(), "ROLLBACK TO w"); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(context.Background(), "RELEASE w")
	return err
}

// isStoreError reports whether err is an outcome of an op's own checks,
// which leaves the transaction usable.
func isStoreError(err error) bool {
	for _, e := range []error{store.ErrNotFound, store.ErrExists, store.ErrOwned, store.ErrGap, store.ErrInvalid} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
