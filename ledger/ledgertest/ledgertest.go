// Package ledgertest gives each test a freshly migrated, empty PostgreSQL
// database: on the server named by RECONCILE_TEST_DATABASE_URL when it is
// set, else on one throwaway tempdb server per test binary.
//
// The schema is migrated once into a template database; each test gets a
// copy made with CREATE DATABASE … TEMPLATE, which is much faster than
// migrating every time. Where the server does not let us create databases,
// each test gets a schema of its own instead.
//
// It also reads back what only tests need to see of a database, such as
// every journal posted (Journals, JournalCount).
package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"reconcile/ledger"
	"reconcile/ledger/tempdb"
)

// EnvURL names the variable holding the DSN of a server to test against
// instead of a throwaway one. Its user needs CREATEDB, or at least CREATE
// on the database, for the per-schema fallback.
const EnvURL = "RECONCILE_TEST_DATABASE_URL"

// setupTimeout bounds starting the server and migrating the template; it
// is not a test's context, because both outlive the test that asks first.
const setupTimeout = 2 * time.Minute

var (
	serverOnce sync.Once
	server     *tempdb.Server // nil when EnvURL is used
	adminDSN   string
	serverErr  error

	templateOnce sync.Once
	admin        *pgxpool.Pool
	template     string // empty when each test gets a schema instead
	templateErr  error

	seq atomic.Int64
)

// Main wraps testing.M: call it from TestMain. It starts no server until a
// test asks for one, and stops it when the tests are done.
func Main(m *testing.M) {
	code := m.Run()
	if err := teardown(); err != nil {
		fmt.Fprintln(os.Stderr, "ledgertest:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func teardown() error {
	var errs []error
	if admin != nil {
		if template != "" && server == nil {
			// A shared server outlives us: leave it as we found it.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{template}.Sanitize()+" WITH (FORCE)")
			cancel()
			errs = append(errs, err)
		}
		admin.Close()
	}
	if server != nil {
		errs = append(errs, server.Stop())
	}
	return errors.Join(errs...)
}

// Server returns the DSN of the shared server's "postgres" database (or
// the RECONCILE_TEST_DATABASE_URL DSN as given), for tests that create and
// drop things themselves.
func Server(t testing.TB) string {
	t.Helper()
	if err := startServer(); err != nil {
		t.Fatal(err)
	}
	return adminDSN
}

func startServer() error {
	serverOnce.Do(func() {
		if dsn := os.Getenv(EnvURL); dsn != "" {
			adminDSN = dsn
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		server, serverErr = tempdb.Start(ctx, tempdb.Options{Dir: memoryDir()})
		if serverErr != nil {
			serverErr = fmt.Errorf("ledgertest: start a throwaway PostgreSQL (or set %s): %w", EnvURL, serverErr)
			return
		}
		adminDSN = server.DSN("postgres")
	})
	return serverErr
}

// memoryDir returns a fresh directory on /dev/shm when the machine has one,
// else "" for tempdb's default. On a memory file system CREATE DATABASE
// copies a template several times faster than on a slow disk, and the
// server is thrown away anyway.
func memoryDir() string {
	fi, err := os.Stat("/dev/shm")
	if err != nil || !fi.IsDir() {
		return ""
	}
	dir, err := os.MkdirTemp("/dev/shm", "reconcile-pg-")
	if err != nil {
		return ""
	}
	return dir
}

// prepareTemplate migrates the template database once per test binary.
func prepareTemplate() error {
	templateOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		admin, templateErr = pgxpool.New(ctx, adminDSN)
		if templateErr != nil {
			templateErr = fmt.Errorf("ledgertest: connect to %s: %w", ledger.RedactDSN(adminDSN), templateErr)
			return
		}
		// The pid keeps test binaries that share one server apart.
		name := fmt.Sprintf("reconcile_template_%d", os.Getpid())
		_, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
			return // fall back to a schema per test
		}
		if err != nil {
			templateErr = fmt.Errorf("ledgertest: create template database: %w", err)
			return
		}
		template = name
		db, err := ledger.Open(ctx, withDatabase(adminDSN, name))
		if err != nil {
			templateErr = fmt.Errorf("ledgertest: %w", err)
			return
		}
		// A template must have no connections when it is copied.
		defer db.Close()
		if _, err := db.Migrate(ctx); err != nil {
			templateErr = fmt.Errorf("ledgertest: migrate template: %w", err)
		}
	})
	return templateErr
}

// DB returns a freshly migrated, empty database for this test and its DSN,
// and drops it when the test ends. With no server binaries and no
// RECONCILE_TEST_DATABASE_URL it fails the test: a CI without PostgreSQL
// must not pass by skipping.
func DB(t testing.TB) (*ledger.DB, string) {
	t.Helper()
	dsn, migrated := newDatabase(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	db, err := ledger.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("ledgertest: %v", err)
	}
	t.Cleanup(db.Close) // runs before the drop: cleanups run last in, first out
	if !migrated {
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatalf("ledgertest: migrate: %v", err)
		}
	}
	return db, dsn
}

// EmptyDB returns the DSN of a database (or schema) for this test with no
// tables at all, for tests of migration itself; it is dropped when the test
// ends.
func EmptyDB(t testing.TB) string {
	t.Helper()
	dsn, _ := newDatabase(t, false)
	return dsn
}

// newDatabase creates a database for the test, a copy of the migrated
// template when fromTemplate is set, and reports whether it is migrated.
func newDatabase(t testing.TB, fromTemplate bool) (dsn string, migrated bool) {
	t.Helper()
	if err := startServer(); err != nil {
		t.Fatal(err)
	}
	if err := prepareTemplate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()

	name := fmt.Sprintf("reconcile_test_%d_%d", os.Getpid(), seq.Add(1))
	ident := pgx.Identifier{name}.Sanitize()
	var create, drop string
	switch {
	case template != "" && fromTemplate:
		create = "CREATE DATABASE " + ident + " TEMPLATE " + pgx.Identifier{template}.Sanitize()
		drop = "DROP DATABASE IF EXISTS " + ident + " WITH (FORCE)"
		dsn, migrated = withDatabase(adminDSN, name), true
	case template != "":
		create = "CREATE DATABASE " + ident
		drop = "DROP DATABASE IF EXISTS " + ident + " WITH (FORCE)"
		dsn = withDatabase(adminDSN, name)
	default:
		create = "CREATE SCHEMA " + ident
		drop = "DROP SCHEMA IF EXISTS " + ident + " CASCADE"
		dsn = WithParam(adminDSN, "search_path", name)
	}
	if _, err := admin.Exec(ctx, create); err != nil {
		t.Fatalf("ledgertest: %s: %v", create, err)
	}
	t.Cleanup(func() {
		// The test's own context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := admin.Exec(ctx, drop); err != nil {
			t.Errorf("ledgertest: %s: %v", drop, err)
		}
	})
	return dsn, migrated
}

// withDatabase returns dsn pointing at database name instead.
func withDatabase(dsn, name string) string {
	if u, ok := parseURL(dsn); ok {
		u.Path = "/" + name
		u.RawPath = ""
		return u.String()
	}
	// In key/value form the last setting of a key wins.
	return dsn + " dbname=" + quote(name)
}

// WithParam returns dsn with a run-time parameter set, such as search_path.
func WithParam(dsn, key, value string) string {
	if u, ok := parseURL(dsn); ok {
		q := u.Query()
		q.Set(key, value)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " " + key + "=" + quote(value)
}

func parseURL(dsn string) (*url.URL, bool) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return nil, false
	}
	u, err := url.Parse(dsn)
	return u, err == nil
}

func quote(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}
