package ledger_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

func TestUnapplied(t *testing.T) {
	ctx := context.Background()
	db, err := ledger.Open(ctx, ledgertest.EmptyDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	all, err := ledger.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(all, wantMigrations) {
		t.Errorf("Migrations: got %q, want %q", all, wantMigrations)
	}
	steps := []struct {
		name string
		do   func() error
		want []string
	}{
		{"never migrated", func() error { return nil }, wantMigrations},
		{"migrated", func() error { _, err := db.Migrate(ctx); return err }, nil},
		{"last one undone", func() error {
			return db.Exec(ctx, fmt.Sprintf(`DELETE FROM schema_migrations WHERE version = %d`, len(wantMigrations)))
		}, wantMigrations[len(wantMigrations)-1:]},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got, err := db.Unapplied(ctx)
		if err != nil {
			t.Fatalf("%s: Unapplied: %v", s.name, err)
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: Unapplied got %q, want %q", s.name, got, s.want)
		}
	}
}
