package ledger

import (
	"context"
	"fmt"
)

// Unapplied returns, in order, the names of the embedded migrations the
// database has not applied: none when its schema is current, all of them
// when it was never migrated. It only reads, so a check can call it
// without taking the migrators' lock.
func (db *DB) Unapplied(ctx context.Context) ([]string, error) {
	ms, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	var exists bool
	if err := db.pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", interpretError(err))
	}
	done := map[int]bool{}
	if exists {
		rows, err := db.pool.Query(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", interpretError(err))
		}
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read schema_migrations: %w", interpretError(err))
			}
			done[v] = true
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", interpretError(err))
		}
	}
	var missing []string
	for _, m := range ms {
		if !done[m.version] {
			missing = append(missing, m.name)
		}
	}
	return missing, nil
}

// Migrations returns the names of every embedded migration, in order.
func Migrations() ([]string, error) {
	ms, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.name
	}
	return names, nil
}
