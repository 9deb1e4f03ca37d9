package ledger

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one numbered file of migrations/.
type migration struct {
	version int
	name    string // the file name without .sql, e.g. 0001_reference_schema
	sql     string
}

// loadMigrations reads the embedded migrations in version order. Files are
// named NNNN_what.sql; a gap or a repeated number is a build mistake and
// is refused rather than applied in a surprising order.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".sql")
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: want a name like 0001_what.sql", e.Name())
		}
		b, err := fs.ReadFile(migrationFS, path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d (versions run 1, 2, 3, … without gaps or repeats)", m.name, i+1)
		}
	}
	return ms, nil
}

// The advisory lock every migrator takes. Advisory locks are scoped to the
// database, so migrators of different databases do not wait on each other.
const migrateLockSQL = `SELECT pg_advisory_xact_lock(hashtext('reconcile/schema_migrations'))`

const createMigrationsTableSQL = `
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    int PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)`

// Migrate applies the migrations the database does not have yet, in order,
// each in its own transaction together with its schema_migrations row, and
// returns the names of those it applied. Concurrent migrators serialise on
// an advisory lock, so the second finds the work done and applies nothing.
func (db *DB) Migrate(ctx context.Context) (applied []string, err error) {
	ms, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	// Even CREATE TABLE IF NOT EXISTS fails when two sessions race on it
	// (a unique violation in pg_type), hence the lock here too.
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, migrateLockSQL); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, createMigrationsTableSQL)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("migrate: create schema_migrations: %w", interpretError(err))
	}
	for _, m := range ms {
		done := false
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, migrateLockSQL); err != nil {
				return err
			}
			// Checked under the lock: a migrator that waited sees what the
			// one before it committed.
			if err := tx.QueryRow(ctx,
				`SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`,
				m.version).Scan(&done); err != nil {
				return err
			}
			if done {
				return nil
			}
			// No arguments: the simple protocol runs the whole file.
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx,
				`INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`,
				m.version, m.name)
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migrate: apply %s: %w", m.name, interpretError(err))
		}
		if !done {
			applied = append(applied, m.name)
		}
	}
	return applied, nil
}
