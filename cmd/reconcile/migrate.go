package main

import (
	"context"
	"fmt"
)

const migrateSynopsis = `reconcile migrate [--dsn DSN] [--config FILE]

Creates or upgrades the schema: the reference tables (orders, refunds,
idempotency_records) and the job's own (runs, findings, journals,
journal_lines). Safe to run again and from several places at once.`

func (a *App) migrateCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("migrate", migrateSynopsis)
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` (default: $RECONCILE_DATABASE_URL)")
	cfgFile := fs.String("config", "", "config `FILE` (JSON)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig("migrate", *cfgFile)
	if err != nil {
		return err
	}
	db, err := a.openDB(ctx, "migrate", *dsn, cfg)
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
