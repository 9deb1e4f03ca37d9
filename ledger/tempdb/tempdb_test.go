package tempdb_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile/ledger/tempdb"
)

func TestStartConnectStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	srv, err := tempdb.Start(ctx, tempdb.Options{})
	if errors.Is(err, tempdb.ErrNoBinaries) {
		t.Fatal(err) // CI must fail loudly, not skip
	}
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	dir := srv.Dir()

	dsn := srv.DSN("postgres")
	if !strings.Contains(dsn, "host="+filepath.Join(dir, "sock")) {
		t.Errorf("DSN() = %q, want host= the socket directory under %s", dsn, dir)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		srv.Stop()
		t.Fatalf("connect to %s: %v", dsn, err)
	}
	var got string
	if err := conn.QueryRow(ctx, "SHOW fsync").Scan(&got); err != nil {
		t.Errorf("SHOW fsync: %v", err)
	} else if got != "off" {
		t.Errorf("fsync = %q, want off", got)
	}
	var listen string
	if err := conn.QueryRow(ctx, "SHOW listen_addresses").Scan(&listen); err != nil {
		t.Errorf("SHOW listen_addresses: %v", err)
	} else if listen != "" {
		t.Errorf("listen_addresses = %q, want empty (no TCP)", listen)
	}
	conn.Close(ctx)

	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after Stop, stat %s: err = %v, want not exist", dir, err)
	}
	if _, err := pgx.Connect(ctx, dsn); err == nil {
		t.Errorf("connect after Stop succeeded, want an error")
	}
}

func TestStartInGivenDir(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	parent, err := os.MkdirTemp("", "tempdb-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(parent)
	// The postgres user must be able to traverse the parent when we run as root.
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "db with space")

	srv, err := tempdb.Start(ctx, tempdb.Options{Dir: dir})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	conn, err := pgx.Connect(ctx, srv.DSN("postgres"))
	if err != nil {
		srv.Stop()
		t.Fatalf("connect to %s: %v", srv.DSN("postgres"), err)
	}
	conn.Close(ctx)
	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after Stop, stat %s: err = %v, want not exist", dir, err)
	}
}

func TestFindBinaries(t *testing.T) {
	dir, err := tempdb.FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("FindBinaries() = %s, which has no %s: %v", dir, name, err)
		}
	}
}

func TestNoBinariesMessage(t *testing.T) {
	msg := tempdb.ErrNoBinaries.Error()
	for _, want := range []string{"apt-get install postgresql", "RECONCILE_DATABASE_URL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("ErrNoBinaries = %q, want it to mention %q", msg, want)
		}
	}
}
