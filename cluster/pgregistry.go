package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	actorcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tack-run/tack/store/postgres"
)

// pgRegistry keeps the registrations of a cluster's members in the table
// tack_cluster_members of the cluster's PostgreSQL database (the
// members' store), one row per member whose expiry PostgreSQL's own clock
// is compared with: every member and client judges a registration by the
// same clock, and a row past its expiry is never renewed.
type pgRegistry struct {
	pool    *pgxpool.Pool
	cluster string
	member  string
}

// pgLock serialises the creation of the table (members start together):
// a transaction-scoped advisory lock (the key is "tack" in ASCII).
const pgLock = `SELECT pg_advisory_xact_lock(1952539499)`

// pgSchema creates the table if it is missing.
const pgSchema = `
CREATE TABLE IF NOT EXISTS tack_cluster_members (
	cluster text NOT NULL,
	member  text NOT NULL,
	host    text NOT NULL,
	port    integer NOT NULL,
	kinds   text[] NOT NULL,
	expires timestamptz NOT NULL,
	PRIMARY KEY (cluster, member)
)`

// pgUndefinedTable is PostgreSQL's SQLSTATE for a table that does not
// exist.
const pgUndefinedTable = "42P01"

// pgForget is how long a lapsed row is kept before a member that
// registers removes it (it tells who was there, for a while).
const pgForget = time.Hour

// newPgRegistry connects to the database at dsn (lazily: the first query
// dials) for cluster name.
func newPgRegistry(dsn, name string) (*pgRegistry, error) {
	cfg, err := postgres.ParseConfig(dsn) // a stalled member's registration must not lock the others out
	if err != nil {
		return nil, fmt.Errorf("cluster provider postgres: %w", err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster provider postgres: %w", err)
	}
	return &pgRegistry{pool: pool, cluster: name}, nil
}

func (r *pgRegistry) register(ctx context.Context, m *actorcluster.Member, ttl time.Duration) error {
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, pgLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, pgSchema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM tack_cluster_members WHERE cluster = $1 AND expires < now() - $2::interval`,
			r.cluster, pgForget); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO tack_cluster_members (cluster, member, host, port, kinds, expires)
			VALUES ($1, $2, $3, $4, $5, now() + $6::interval)`, r.cluster, m.Id, m.Host, m.Port, m.Kinds, ttl)
		return err
	})
	if err != nil {
		return fmt.Errorf("registering in PostgreSQL: %w", err)
	}
	r.member = m.Id
	return nil
}

func (r *pgRegistry) renew(ctx context.Context, ttl time.Duration) error {
	tag, err := r.pool.Exec(ctx, `UPDATE tack_cluster_members SET expires = now() + $3::interval
		WHERE cluster = $1 AND member = $2 AND expires > now()`, r.cluster, r.member, ttl)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errLapsed
	}
	return nil
}

func (r *pgRegistry) list(ctx context.Context) ([]*actorcluster.Member, error) {
	rows, err := r.pool.Query(ctx, `SELECT member, host, port, kinds FROM tack_cluster_members
		WHERE cluster = $1 AND expires > now() ORDER BY member`, r.cluster)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgUndefinedTable {
		return nil, nil // no member has registered yet: a client may come first
	}
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*actorcluster.Member, error) {
		var m actorcluster.Member
		err := row.Scan(&m.Id, &m.Host, &m.Port, &m.Kinds)
		return &m, err
	})
}

func (r *pgRegistry) deregister(ctx context.Context) error {
	_, err := r.pool.Exec(ctx, `DELETE FROM tack_cluster_members WHERE cluster = $1 AND member = $2`, r.cluster, r.member)
	return err
}

func (r *pgRegistry) close() { r.pool.Close() }
