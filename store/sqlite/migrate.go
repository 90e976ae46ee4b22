package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	mig "github.com/tack-run/tack/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrate applies the pending migrations, each in its own transaction with
// its schema_migrations row. The file lock makes this process the only one
// migrating.
func migrate(ctx context.Context, db *sql.DB, now time.Time) error {
	ms, err := mig.Load(migrations, "migrations")
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("sqlite store: schema_migrations: %w", err)
	}
	applied, err := appliedVersions(ctx, db)
	if err != nil {
		return err
	}
	pending, err := mig.Pending(ms, applied)
	if err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	for _, m := range pending {
		if err := apply(ctx, db, m, now); err != nil {
			return fmt.Errorf("sqlite store: migration %d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

func appliedVersions(ctx context.Context, db *sql.DB) ([]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: reading schema_migrations: %w", err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, rows.Err()
}

func apply(ctx context.Context, db *sql.DB, m mig.Migration, now time.Time) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, now.UnixMicro()); err != nil {
		return err
	}
	return tx.Commit()
}
