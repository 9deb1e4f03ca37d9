package ledger_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

var wantMigrations = []string{"0001_reference_schema", "0002_job_tables", "0003_lifecycle", "0004_memory_blobs", "0005_shards", "0006_memory_parts", "0007_row_fingerprints_and_alert_delivery", "0008_new_keys", "0009_fetch", "0010_orders_channel_id", "0011_disputes", "0012_payouts"}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	db, err := ledger.Open(ctx, ledgertest.EmptyDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	got, err := db.Migrate(ctx)
	if err != nil {
		t.Fatalf("first Migrate: %v", err)
	}
	if !slices.Equal(got, wantMigrations) {
		t.Errorf("first Migrate applied %q, want %q", got, wantMigrations)
	}
	got, err = db.Migrate(ctx)
	if err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if len(got) != 0 {
		t.Errorf("second Migrate applied %q, want nothing", got)
	}
	assertMigrationRows(t, db)
}

func TestMigrateConcurrently(t *testing.T) {
	ctx := context.Background()
	dsn := ledgertest.EmptyDB(t)
	const n = 3
	applied := make([][]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := ledger.Open(ctx, dsn)
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			applied[i], errs[i] = db.Migrate(ctx)
		}()
	}
	wg.Wait()
	var all []string
	for i := range n {
		if errs[i] != nil {
			t.Errorf("migrator %d: %v", i, errs[i])
		}
		all = append(all, applied[i]...)
	}
	slices.Sort(all)
	if !slices.Equal(all, wantMigrations) {
		t.Errorf("migrators applied %q between them, want each migration once: %q", all, wantMigrations)
	}
	db, err := ledger.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	assertMigrationRows(t, db)
}

func TestMigratedTemplateIsCurrent(t *testing.T) {
	db, _ := ledgertest.DB(t)
	got, err := db.Migrate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("Migrate on a ledgertest.DB applied %q, want nothing", got)
	}
	assertMigrationRows(t, db)
}

func assertMigrationRows(t *testing.T, db *ledger.DB) {
	t.Helper()
	rows, err := db.Pool().Query(context.Background(),
		`SELECT version, name FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, wantMigrations) {
		t.Errorf("schema_migrations = %q, want %q", got, wantMigrations)
	}
}
