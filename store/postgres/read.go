package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/internal/codec"
)

// sessionCols are the record columns scanSession reads, in order.
const sessionCols = `id, model, user_name, spec::text, state, message_count, history_start, title,
	input_tokens, output_tokens, total_tokens, cached_input_tokens, reasoning_tokens, cost_usd,
	event_seq, owner, lease_expires, created_at, updated_at`

// scanSession reads sessionCols (and extra columns after them) from row.
func scanSession(row pgx.Row, extra ...any) (*store.Session, error) {
	s := &store.Session{Usage: &eventsv1.Usage{}}
	var spec *string
	var seq int64
	var expires *time.Time
	u := s.Usage
	dest := append([]any{&s.ID, &s.Config.Model, &s.Config.User, &spec, &s.State, &s.MessageCount, &s.HistoryStart, &s.Title,
		&u.InputTokens, &u.OutputTokens, &u.TotalTokens, &u.CachedInputTokens, &u.ReasoningTokens, &u.CostUsd,
		&seq, &s.Owner, &expires, &s.CreatedAt, &s.UpdatedAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if spec != nil && *spec != "" {
		s.Config.Spec = []byte(*spec)
	}
	if expires != nil {
		s.LeaseExpires = expires.UTC()
	}
	s.EventSeq = uint64(seq)
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return s, nil
}

// Get returns the record and volatile state.
func (s *Store) Get(ctx context.Context, id string) (*store.Snapshot, error) {
	return s.get(ctx, id, false)
}

// Load returns the record, volatile state and history, read by one
// statement and so from one snapshot.
func (s *Store) Load(ctx context.Context, id string) (*store.Snapshot, error) {
	return s.get(ctx, id, true)
}

func (s *Store) get(ctx context.Context, id string, history bool) (*store.Snapshot, error) {
	if err := store.CheckID(id); err != nil {
		return nil, err
	}
	query := `SELECT ` + sessionCols + `, volatile, NULL::bytea[] FROM sessions WHERE id = $1`
	if history {
		query = `SELECT ` + sessionCols + `, volatile,
			(SELECT array_agg(data ORDER BY idx) FROM messages WHERE session_id = s.id)
			FROM sessions s WHERE id = $1`
	}
	var rec *store.Session
	var vol []byte
	var msgs [][]byte
	err := s.retry(ctx, readError, func() error {
		var err error
		rec, err = scanSession(s.pool.QueryRow(ctx, query, id), &vol, &msgs)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, wrap(err)
	}
	snap := &store.Snapshot{Session: *rec}
	if snap.Volatile, err = codec.DecodeVolatile(vol); err != nil {
		return nil, err
	}
	if snap.Messages, err = decodeAll(msgs); err != nil {
		return nil, err
	}
	return snap, nil
}

// Messages returns a page of the history; the session row is joined so an
// unknown session is told from an empty page in one statement.
func (s *Store) Messages(ctx context.Context, id string, from, limit int) ([]*eventsv1.Message, error) {
	if err := store.CheckID(id); err != nil {
		return nil, err
	}
	if from < 0 {
		return nil, fmt.Errorf("%w: negative message index %d", store.ErrInvalid, from)
	}
	var lim any // NULL: no limit
	if limit > 0 {
		lim = limit
	}
	var data [][]byte
	err := s.retry(ctx, readError, func() error {
		rows, _ := s.pool.Query(ctx, `SELECT m.data FROM sessions s LEFT JOIN LATERAL (
				SELECT idx, data FROM messages WHERE session_id = s.id AND idx >= $2 ORDER BY idx LIMIT $3
			) m ON true WHERE s.id = $1 ORDER BY m.idx`, id, from, lim)
		var err error
		data, err = pgx.CollectRows(rows, pgx.RowTo[[]byte])
		return err
	})
	switch {
	case err != nil:
		return nil, wrap(err)
	case len(data) == 0:
		return nil, notFound(id)
	case len(data) == 1 && data[0] == nil:
		return nil, nil // the session, without messages in the range
	}
	return decodeAll(data)
}

func decodeAll(data [][]byte) ([]*eventsv1.Message, error) {
	if len(data) == 0 {
		return nil, nil
	}
	out := make([]*eventsv1.Message, len(data))
	for i, b := range data {
		m, err := codec.DecodeMessage(b)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// List returns a page of records, most recently updated first.
func (s *Store) List(ctx context.Context, p store.Page) (*store.Listing, error) {
	n := p.Size()
	args := []any{n + 1}
	var where []string
	if p.User != "" {
		args = append(args, p.User)
		where = append(where, `user_name = $`+strconv.Itoa(len(args)))
	}
	if p.Cursor != "" {
		c, err := store.DecodeCursor(p.Cursor)
		if err != nil {
			return nil, err
		}
		args = append(args, c.Updated, c.ID)
		where = append(where, fmt.Sprintf(`(updated_at, id) < ($%d, $%d)`, len(args)-1, len(args)))
	}
	query := `SELECT ` + sessionCols + ` FROM sessions`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	query += ` ORDER BY updated_at DESC, id DESC LIMIT $1`
	out := &store.Listing{}
	err := s.retry(ctx, readError, func() error {
		rows, _ := s.pool.Query(ctx, query, args...)
		recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.Session, error) { return scanSession(row) })
		out.Sessions = recs
		return err
	})
	if err != nil {
		return nil, wrap(err)
	}
	if len(out.Sessions) > n {
		out.Sessions = out.Sessions[:n]
		last := out.Sessions[n-1]
		out.Next = store.EncodeCursor(store.Cursor{Updated: last.UpdatedAt, ID: last.ID})
	}
	return out, nil
}

// Stale returns the sessions last updated before t, sub-agents aside,
// least recently updated first.
func (s *Store) Stale(ctx context.Context, t time.Time, limit int) ([]string, error) {
	var ids []string
	err := s.retry(ctx, readError, func() error {
		rows, _ := s.pool.Query(ctx, `SELECT id FROM sessions WHERE updated_at < $1 AND strpos(id, '/') = 0
			ORDER BY updated_at, id LIMIT $2`, t, store.Page{Limit: limit}.Size())
		var err error
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return ids, wrap(err)
}
