package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/internal/codec"
)

// sessionCols are the record columns scanSession reads, in order.
const sessionCols = `id, model, user_name, spec, state, message_count, history_start, title,
	input_tokens, output_tokens, total_tokens, cached_input_tokens, reasoning_tokens, cost_usd,
	event_seq, owner, lease_expires, created_at, updated_at`

type scanner interface{ Scan(dest ...any) error }

// scanSession reads sessionCols (and extra columns after them) from row.
func scanSession(row scanner, extra ...any) (*store.Session, error) {
	s := &store.Session{Usage: &eventsv1.Usage{}}
	var spec sql.NullString
	var seq, expires, created, updated int64
	u := s.Usage
	dest := append([]any{&s.ID, &s.Config.Model, &s.Config.User, &spec, &s.State, &s.MessageCount, &s.HistoryStart, &s.Title,
		&u.InputTokens, &u.OutputTokens, &u.TotalTokens, &u.CachedInputTokens, &u.ReasoningTokens, &u.CostUsd,
		&seq, &s.Owner, &expires, &created, &updated}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if spec.Valid && spec.String != "" {
		s.Config.Spec = json.RawMessage(spec.String)
	}
	s.EventSeq = uint64(seq)
	s.LeaseExpires, s.CreatedAt, s.UpdatedAt = fromMicro(expires), fromMicro(created), fromMicro(updated)
	return s, nil
}

// Get returns the record and volatile state.
func (s *Store) Get(ctx context.Context, id string) (*store.Snapshot, error) {
	if err := store.CheckID(id); err != nil {
		return nil, err
	}
	return get(ctx, s.rdb, id)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func get(ctx context.Context, q querier, id string) (*store.Snapshot, error) {
	var vol []byte
	rec, err := scanSession(q.QueryRowContext(ctx, `SELECT `+sessionCols+`, volatile FROM sessions WHERE id = ?`, id), &vol)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	snap := &store.Snapshot{Session: *rec}
	if snap.Volatile, err = codec.DecodeVolatile(vol); err != nil {
		return nil, err
	}
	return snap, nil
}

// Load returns the record, volatile state and history from one read
// transaction, so they agree with each other.
func (s *Store) Load(ctx context.Context, id string) (*store.Snapshot, error) {
	if err := store.CheckID(id); err != nil {
		return nil, err
	}
	var snap *store.Snapshot
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		if snap, err = get(ctx, tx, id); err != nil {
			return err
		}
		snap.Messages, err = messages(ctx, tx, id, 0, -1)
		return err
	})
	return snap, err
}

// Messages returns a page of the history.
func (s *Store) Messages(ctx context.Context, id string, from, limit int) ([]*eventsv1.Message, error) {
	if err := store.CheckID(id); err != nil {
		return nil, err
	}
	if from < 0 {
		return nil, fmt.Errorf("%w: negative message index %d", store.ErrInvalid, from)
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	var out []*eventsv1.Message
	err := s.read(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ?`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(id)
		}
		if err != nil {
			return err
		}
		out, err = messages(ctx, tx, id, from, limit)
		return err
	})
	return out, err
}

func messages(ctx context.Context, q querier, id string, from, limit int) ([]*eventsv1.Message, error) {
	rows, err := q.QueryContext(ctx, `SELECT data FROM messages WHERE session_id = ? AND idx >= ? ORDER BY idx LIMIT ?`, id, from, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*eventsv1.Message
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, err
		}
		m, err := codec.DecodeMessage(data)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// List returns a page of records, most recently updated first.
func (s *Store) List(ctx context.Context, p store.Page) (*store.Listing, error) {
	n := p.Size()
	var where []string
	var args []any
	if p.User != "" {
		where, args = append(where, `user_name = ?`), append(args, p.User)
	}
	if p.Cursor != "" {
		c, err := store.DecodeCursor(p.Cursor)
		if err != nil {
			return nil, err
		}
		where, args = append(where, `(updated_at, id) < (?, ?)`), append(args, c.Updated.UnixMicro(), c.ID)
	}
	query := `SELECT ` + sessionCols + ` FROM sessions`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	query += ` ORDER BY updated_at DESC, id DESC LIMIT ?`
	args = append(args, n+1)
	rows, err := s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	defer rows.Close()
	out := &store.Listing{}
	for rows.Next() {
		rec, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite store: %w", err)
		}
		out.Sessions = append(out.Sessions, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	if len(out.Sessions) > n {
		out.Sessions = out.Sessions[:n]
		last := out.Sessions[n-1]
		out.Next = store.EncodeCursor(store.Cursor{Updated: last.UpdatedAt, ID: last.ID})
	}
	return out, nil
}

// read runs f in a read transaction: one consistent snapshot of the WAL.
func (s *Store) read(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return err
		}
		return fmt.Errorf("sqlite store: %w", err)
	}
	return nil
}

// Stale returns the sessions last updated before t, sub-agents aside,
// least recently updated first.
func (s *Store) Stale(ctx context.Context, t time.Time, limit int) ([]string, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT id FROM sessions WHERE updated_at < ? AND instr(id, '/') = 0
		ORDER BY updated_at, id LIMIT ?`, t.UnixMicro(), store.Page{Limit: limit}.Size())
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlite store: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	return ids, nil
}
