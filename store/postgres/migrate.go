package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"

	mig "github.com/tack-run/tack/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrate applies the pending migrations in one transaction that holds an
// advisory lock for the current schema, so Opens racing on a fresh
// database take turns: the first migrates, the others find it done.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := mig.Load(migrations, "migrations")
	if err != nil {
		return err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx,
			`SELECT pg_advisory_xact_lock(hashtext('tack.store.migrate'), hashtext(coalesce(current_schema(), '')))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer     NOT NULL PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL
		)`); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT version FROM schema_migrations`)
		applied, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return err
		}
		pending, err := mig.Pending(ms, applied)
		if err != nil {
			return err
		}
		for _, m := range pending {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, s.opts.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres store: migrating: %w", err)
	}
	return nil
}
