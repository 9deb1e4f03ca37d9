package main

import (
	"context"
	"fmt"

	"reconcile/ledger"
)

const migrateSynopsis = `reconcile migrate [--dsn DSN] [--config FILE]

Creates or upgrades the schema: the reference tables (orders, refunds,
idempotency_records) and the job's own (runs, findings, journals,
journal_lines). Safe to run again and from several places at once.`

func (a *App) migrateCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("migrate", migrateSynopsis)
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` (default: $RECONCILE_DATABASE_URL)")
	config := fs.String("config", "", "config `FILE` (JSON)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := LoadConfig(*config)
	if err != nil {
		return usagef("migrate", "%s", err)
	}
	if *dsn == "" {
		*dsn = a.Getenv(cfg.DatabaseURLEnv)
	}
	if *dsn == "" {
		return usagef("migrate", "no database: pass --dsn or set %s", cfg.DatabaseURLEnv)
	}
	db, err := ledger.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := db.Migrate(ctx)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(a.Stdout, "schema is up to date")
	}
	for _, name := range applied {
		fmt.Fprintf(a.Stdout, "applied %s\n", name)
	}
	return nil
}
