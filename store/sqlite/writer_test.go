package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tack-run/tack/store"
)

// TestGroupCommit runs one group by hand (no writer goroutine, so the
// grouping is deterministic): a request failing its own checks is rolled
// back to its savepoint, one hitting a database error is dropped and the
// group retried, and the rest commit together.
func TestGroupCommit(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "tack.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	insert := func(id string) op {
		return func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, created_at, updated_at) VALUES (?, 1, 1)`, id)
			return err
		}
	}
	insertThen := func(id string, fail error) op {
		return func(ctx context.Context, tx *sql.Tx) error {
			if err := insert(id)(ctx, tx); err != nil {
				return err
			}
			return fail
		}
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		op      op
		wantErr error // nil: committed
		stored  bool
	}{
		{"ok first", t.Context(), insert("a"), nil, true},
		{"store error after a write", t.Context(), insertThen("b", store.ErrGap), store.ErrGap, false},
		{"database error", t.Context(), insertThen("c", errors.New("no such table: nope")), errAny, false},
		{"duplicate key", t.Context(), insert("a"), errAny, false},
		{"cancelled before its turn", cancelled, insert("d"), context.Canceled, false},
		{"ok last", t.Context(), insert("e"), nil, true},
	}
	group := make([]*request, len(tests))
	for i, tc := range tests {
		group[i] = &request{ctx: tc.ctx, op: tc.op, done: make(chan error, 1)}
	}
	(&writer{db: s.wdb}).commit(slices.Clone(group))
	for i, tc := range tests {
		err := <-group[i].done
		switch {
		case tc.wantErr == nil && err != nil, tc.wantErr != nil && err == nil,
			tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
		}
	}
	for _, tc := range []struct {
		id     string
		stored bool
	}{{"a", true}, {"b", false}, {"c", false}, {"d", false}, {"e", true}} {
		var n int
		s.wdb.QueryRow(`SELECT count(*) FROM sessions WHERE id = ?`, tc.id).Scan(&n)
		if (n == 1) != tc.stored {
			t.Errorf("session %s stored = %v, want %v", tc.id, n == 1, tc.stored)
		}
	}
}

// errAny stands for "some error" in TestGroupCommit.
var errAny = errors.New("any error")
