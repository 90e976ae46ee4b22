package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		now := s.opts.Now()
		tag, err := tx.Exec(ctx, `INSERT INTO sessions (id, model, user_name, spec, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (id) DO NOTHING`,
			id, cfg.Model, cfg.User, specArg(cfg.Spec), now)
		if err == nil && tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: %s", store.ErrExists, id)
		}
		return err
	})
	return wrap(err)
}

// Apply commits b in one transaction: the session row is locked (FOR
// UPDATE, which also orders it against a concurrent Acquire) and checked,
// then the writes go in one pipelined round trip.
func (s *Store) Apply(ctx context.Context, id string, b *store.Batch) error {
	if err := store.CheckID(id); err != nil {
		return err
	}
	if err := b.Validate(); err != nil {
		return err
	}
	msgs, err := codec.Messages(b.Messages, b.From)
	if err != nil {
		return err
	}
	u := &update{}
	if err := u.fields(b); err != nil {
		return err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var count int
		var owner string
		var expires *time.Time
		err := tx.QueryRow(ctx, `SELECT message_count, owner, lease_expires FROM sessions WHERE id = $1 FOR UPDATE`, id).
			Scan(&count, &owner, &expires)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
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
		batch := &pgx.Batch{}
		if b.Rewrite {
			batch.Queue(`DELETE FROM messages WHERE session_id = $1 AND idx >= $2`, id, b.From)
		}
		if len(msgs) > 0 {
			batch.Queue(`INSERT INTO messages (session_id, idx, data)
				SELECT $1, $2 + m.i - 1, m.data FROM unnest($3::bytea[]) WITH ORDINALITY AS m (data, i)
				ON CONFLICT (session_id, idx) DO NOTHING`, id, b.From, msgs)
		}
		q, args := u.sql(id, b.Count(count), s.opts.Now())
		batch.Queue(q, args...)
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return err
		}
		if s.beforeCommit != nil {
			return s.beforeCommit(ctx, tx)
		}
		return nil
	})
	return wrap(err)
}

// update builds the UPDATE of a session row.
type update struct {
	set  []string
	args []any
}

func (u *update) add(col string, v any) {
	u.args = append(u.args, v)
	u.set = append(u.set, col+" = $"+strconv.Itoa(len(u.args)))
}

// fields adds the columns b replaces.
func (u *update) fields(b *store.Batch) error {
	if c := b.Config; c != nil {
		u.add("model", c.Model)
		u.add("spec", specArg(c.Spec))
	}
	if b.SetsStart() {
		u.add("history_start", b.HistoryStart)
	}
	if b.State != "" {
		u.add("state", b.State)
	}
	if b.Title != "" {
		u.add("title", b.Title)
	}
	if us := b.Usage; us != nil {
		u.add("input_tokens", us.InputTokens)
		u.add("output_tokens", us.OutputTokens)
		u.add("total_tokens", us.TotalTokens)
		u.add("cached_input_tokens", us.CachedInputTokens)
		u.add("reasoning_tokens", us.ReasoningTokens)
		u.add("cost_usd", us.CostUsd)
	}
	if b.EventSeq != 0 {
		u.add("event_seq", int64(b.EventSeq))
	}
	if b.Volatile != nil {
		vol, err := codec.EncodeVolatile(b.Volatile)
		if err != nil {
			return err
		}
		u.add("volatile", vol)
	}
	return nil
}

// sql returns the statement and its arguments that update session id
// with the fields and the new message count and update time. It leaves u
// as it was.
func (u *update) sql(id string, count int, now time.Time) (string, []any) {
	c := update{set: slices.Clone(u.set), args: slices.Clone(u.args)}
	c.add("message_count", count)
	c.add("updated_at", now)
	c.args = append(c.args, id)
	return `UPDATE sessions SET ` + strings.Join(c.set, ", ") + ` WHERE id = $` + strconv.Itoa(len(c.args)), c.args
}

// Delete removes the session and its sub-agents; their messages go with
// them (ON DELETE CASCADE). The rows leave the table files when PostgreSQL
// vacuums them (docs/sessions.md).
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := store.CheckID(id); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id)
		if err == nil && tag.RowsAffected() == 0 {
			return notFound(id)
		}
		if err == nil {
			_, err = tx.Exec(ctx, `DELETE FROM sessions WHERE starts_with(id, $1)`, id+"/")
		}
		return err
	})
	return wrap(err)
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

func owned(id, owner string, expires *time.Time) error {
	e := &store.OwnedError{Session: id, Owner: owner}
	if expires != nil {
		e.Expires = expires.UTC()
	}
	return e
}

func gap(id string, from, count int) error {
	return fmt.Errorf("%w: session %s has %d messages, batch starts at %d", store.ErrGap, id, count, from)
}

// wrap prefixes faults with the package name; store errors pass as they are.
func wrap(err error) error {
	if err == nil || isStoreError(err) {
		return err
	}
	return fmt.Errorf("postgres store: %w", err)
}

func isStoreError(err error) bool {
	for _, e := range []error{store.ErrNotFound, store.ErrExists, store.ErrOwned, store.ErrGap, store.ErrInvalid} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
