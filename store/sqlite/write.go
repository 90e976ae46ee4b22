package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

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
	return s.w.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := s.opts.Now().UnixMicro()
		res, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, model, user_name, spec, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			id, cfg.Model, cfg.User, specArg(cfg.Spec), now, now)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, fmt.Errorf("%w: %s", store.ErrExists, id))
		}
		return nil
	})
}

// Apply commits b in the next group commit.
func (s *Store) Apply(ctx context.Context, id string, b *store.Batch) error {
	if err := store.CheckID(id); err != nil {
		return err
	}
	if err := b.Validate(); err != nil {
		return err
	}
	// Encode before queueing: the writer goroutine only runs SQL.
	msgs, err := codec.Messages(b.Messages, b.From)
	if err != nil {
		return err
	}
	set, args, err := updates(b)
	if err != nil {
		return err
	}
	return s.w.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var count int
		var owner string
		var expires int64
		err := tx.QueryRowContext(ctx, `SELECT message_count, owner, lease_expires FROM sessions WHERE id = ?`, id).
			Scan(&count, &owner, &expires)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return notFound(id)
		case err != nil:
			return err
		case b.Owner != "" && owner != b.Owner:
			return owned(id, owner, expires)
		case b.From > count:
			return gap(id, b.From, count)
		}
		if err := b.Start(b.Count(count)); err != nil {
			return err
		}
		if b.Rewrite {
			if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ? AND idx >= ?`, id, b.From); err != nil {
				return err
			}
		}
		if err := insertMessages(ctx, tx, id, b.From, msgs); err != nil {
			return err
		}
		args := append(args, b.Count(count), s.opts.Now().UnixMicro(), id)
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET `+set+`message_count = ?, updated_at = ? WHERE id = ?`, args...)
		return err
	})
}

// updates returns the SET clauses (each ending in ", ") and arguments for
// the record fields b replaces.
func updates(b *store.Batch) (string, []any, error) {
	var set strings.Builder
	var args []any
	add := func(clause string, vals ...any) {
		set.WriteString(clause)
		set.WriteString(", ")
		args = append(args, vals...)
	}
	if c := b.Config; c != nil {
		add("model = ?, spec = ?", c.Model, specArg(c.Spec))
	}
	if b.SetsStart() {
		add("history_start = ?", b.HistoryStart)
	}
	if b.State != "" {
		add("state = ?", b.State)
	}
	if b.Title != "" {
		add("title = ?", b.Title)
	}
	if u := b.Usage; u != nil {
		add("input_tokens = ?, output_tokens = ?, total_tokens = ?, cached_input_tokens = ?, reasoning_tokens = ?, cost_usd = ?",
			u.InputTokens, u.OutputTokens, u.TotalTokens, u.CachedInputTokens, u.ReasoningTokens, u.CostUsd)
	}
	if b.EventSeq != 0 {
		add("event_seq = ?", int64(b.EventSeq))
	}
	if b.Volatile != nil {
		vol, err := codec.EncodeVolatile(b.Volatile)
		if err != nil {
			return "", nil, err
		}
		add("volatile = ?", vol)
	}
	return set.String(), args, nil
}

// insertMessages inserts the encoded messages from index from, skipping
// indexes already stored, in statements of at most chunk rows.
func insertMessages(ctx context.Context, tx *sql.Tx, id string, from int, msgs [][]byte) error {
	const chunk = 500 // 3 parameters a row, well under SQLite's limit
	for start := 0; start < len(msgs); start += chunk {
		part := msgs[start:min(start+chunk, len(msgs))]
		var q strings.Builder
		q.WriteString(`INSERT INTO messages (session_id, idx, data) VALUES `)
		args := make([]any, 0, 3*len(part))
		for i, m := range part {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?)")
			args = append(args, id, from+start+i, m)
		}
		q.WriteString(` ON CONFLICT (session_id, idx) DO NOTHING`)
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes the session and its sub-agents; their messages go with
// them (ON DELETE CASCADE). secure_delete (see pragmas) overwrites what
// they held with zeros once the WAL is checkpointed.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := store.CheckID(id); err != nil {
		return err
	}
	return s.w.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, notFound(id))
		}
		prefix := id + "/"
		_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE substr(id, 1, ?) = ?`, len(prefix), prefix)
		return err
	})
}

// specArg is the column value of a session's settings: NULL when there
// are none, else the JSON text verbatim.
func specArg(spec []byte) any {
	if len(spec) == 0 {
		return nil
	}
	return string(spec)
}

func notFound(id string) error { return fmt.Errorf("%w: %s", store.ErrNotFound, id) }

func owned(id, owner string, expires int64) error {
	return &store.OwnedError{Session: id, Owner: owner, Expires: fromMicro(expires)}
}

func gap(id string, from, count int) error {
	return fmt.Errorf("%w: session %s has %d messages, batch starts at %d", store.ErrGap, id, count, from)
}

// fromMicro is the time of a stored Unix-microsecond column; 0 is zero.
func fromMicro(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}
