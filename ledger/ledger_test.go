package ledger_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

func TestMain(m *testing.M) { ledgertest.Main(m) }

func TestRedactDSN(t *testing.T) {
	tests := []struct {
		name, dsn, want string
	}{
		{"url", "postgres://app:s3cret@db.example:5432/ledger?sslmode=require",
			"postgres://app:xxxxx@db.example:5432/ledger?sslmode=require"},
		{"url postgresql scheme", "postgresql://app:s3cret@db/ledger", "postgresql://app:xxxxx@db/ledger"},
		{"url no password", "postgres://app@db/ledger", "postgres://app@db/ledger"},
		{"url password in query", "postgres://app@db/ledger?password=s3cret&sslmode=disable",
			"postgres://app@db/ledger?password=xxxxx&sslmode=disable"},
		{"url escaped password", "postgres://app:p%40ss%2Fw@db/ledger", "postgres://app:xxxxx@db/ledger"},
		{"url unparseable", "postgres://app:pa ss%zz@db/ledger", "postgres://xxxxx@db/ledger"},
		{"kv", "host=db user=app password=s3cret dbname=ledger", "host=db user=app password=xxxxx dbname=ledger"},
		{"kv quoted", "host=db password='s3 cr\\'et' dbname=ledger", "host=db password=xxxxx dbname=ledger"},
		{"kv spaces around =", "host=db password = s3cret dbname=ledger", "host=db password = xxxxx dbname=ledger"},
		{"kv upper case", "host=db PASSWORD=s3cret", "host=db PASSWORD=xxxxx"},
		{"kv no password", "host=/tmp/sock dbname=ledger", "host=/tmp/sock dbname=ledger"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ledger.RedactDSN(tt.dsn)
			if got != tt.want {
				t.Errorf("RedactDSN(%q) = %q, want %q", tt.dsn, got, tt.want)
			}
			if strings.Contains(got, "s3cret") || strings.Contains(got, "cr\\'et") {
				t.Errorf("RedactDSN(%q) = %q, still shows the password", tt.dsn, got)
			}
		})
	}
}

func TestOpenErrorHidesPassword(t *testing.T) {
	const secret = "Hunter2-s3cret"
	tests := []struct{ name, dsn string }{
		{"kv", "host=/nonexistent/reconcile-sock user=app password=" + secret + " dbname=x connect_timeout=2"},
		{"kv quoted with spaces", "host=/nonexistent/reconcile-sock password = '" + secret + " x' dbname=x connect_timeout=2"},
		{"url", "postgres://app:" + secret + "@/x?host=/nonexistent/reconcile-sock&connect_timeout=2"},
		{"url password param", "postgres:///x?host=/nonexistent/reconcile-sock&password=" + secret + "&connect_timeout=2"},
		{"kv unparseable", "host=/nonexistent password=" + secret + " port=notaport"},
		{"url unparseable", "postgres://app:" + secret + "@/x?host=/nonexistent&port=notaport"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			db, err := ledger.Open(ctx, tt.dsn)
			if err == nil {
				db.Close()
				t.Fatalf("Open(%q) succeeded, want an error", ledger.RedactDSN(tt.dsn))
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Open error %q contains the password", err)
			}
			if !strings.Contains(err.Error(), "xxxxx") && !strings.Contains(err.Error(), "cannot be parsed") {
				t.Errorf("Open error %q names neither the redacted DSN nor why it cannot be parsed", err)
			}
		})
	}
}

// TestOpenErrorHidesMisreadPasswords: DSN shapes the driver reads
// differently from what was meant, each with the password its writer
// meant. No piece of that password of three characters or more is in the
// error, before or after reports.RedactSecrets would see it. A raw '@' in
// a URL's password used to make its tail the host name, which the driver's
// "lookup …" error quotes.
func TestOpenErrorHidesMisreadPasswords(t *testing.T) {
	tests := []struct{ name, dsn, password string }{
		{"url, raw @", "postgres://recon:Qz7r@Kv9w@Xw2.invalid:5432/recon?connect_timeout=2", "Qz7r@Kv9w"},
		{"url, raw @ and a host that answers", "postgres://recon:Qz7r@Kv9w@127.0.0.1:1/recon?connect_timeout=2", "Qz7r@Kv9w"},
		{"url, raw @ and /", "postgres://recon:Qz7@Kv9/Xw2@127.0.0.1:1/recon?connect_timeout=2", "Qz7@Kv9/Xw2"},
		{"url, raw / alone", "postgres://recon:Qz7x/Kv9w@127.0.0.1:1/recon?connect_timeout=2", "Qz7x/Kv9w"},
		{"url, raw ? and @", "postgres://recon:Qz7?Kv9@Xw2@127.0.0.1:1/recon?connect_timeout=2", "Qz7?Kv9@Xw2"},
		{"url, raw # and @", "postgres://recon:Qz7#Kv9@Xw2@db.invalid:1/recon", "Qz7#Kv9@Xw2"},
		{"url, raw :", "postgres://recon:Qz7:Kv9w@127.0.0.1:1/recon?connect_timeout=2", "Qz7:Kv9w"},
		{"url, raw space", "postgres://recon:Qz7x Kv9w@127.0.0.1:1/recon", "Qz7x Kv9w"},
		{"url, bad escape", "postgres://recon:Qz7%zzKv9w@127.0.0.1:1/recon", "Qz7%zzKv9w"},
		{"url, query password with @ and /", "postgres://recon@127.0.0.1:1/recon?password=Qz7@Kv9/Xw2&connect_timeout=2", "Qz7@Kv9/Xw2"},
		{"url, query password with a space", "postgres://recon@127.0.0.1:1/recon?password=Qz7@Kv9 Xw2", "Qz7@Kv9 Xw2"},
		{"kv, unquoted space", "host=db.invalid user=recon password=Qz7@Kv9 Xw2 dbname=recon", "Qz7@Kv9 Xw2"},
		{"kv, quoted space", "host=127.0.0.1 port=1 user=recon password='Qz7@Kv9 Xw2' dbname=recon connect_timeout=2", "Qz7@Kv9 Xw2"},
		{"kv, unbalanced quote", "host=127.0.0.1 port=1 user=recon password='Qz7@Kv9w dbname=recon", "Qz7@Kv9w"},
		{"kv, a quote inside", "host=127.0.0.1 port=1 user=recon password=Qz7'Kv9w dbname=recon connect_timeout=2", "Qz7'Kv9w"},
		{"kv, @ in the password", "host=/nonexistent/sock user=recon password=Qz7r@Kv9w@Xw2.invalid dbname=recon", "Qz7r@Kv9w@Xw2.invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			db, err := ledger.Open(ctx, tt.dsn)
			if err == nil {
				db.Close()
				t.Fatalf("Open succeeded, want an error")
			}
			msg := err.Error()
			for _, piece := range strings.FieldsFunc(tt.password, func(r rune) bool { return strings.ContainsRune(":@/?# '%", r) }) {
				if len(piece) >= 3 && strings.Contains(msg, piece) {
					t.Errorf("the error shows %q of the password %q:\n%s", piece, tt.password, msg)
				}
			}
		})
	}
}

func TestInterpretError(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)

	t.Run("no rows is ErrNotFound", func(t *testing.T) {
		_, err := db.GetRun(ctx, "nope")
		if !errors.Is(err, reconcile.ErrNotFound) {
			t.Errorf("GetRun(missing) error = %v, want ErrNotFound", err)
		}
	})
	t.Run("unique violation is ErrConflict", func(t *testing.T) {
		err := db.Exec(ctx, `CREATE TABLE u (k text PRIMARY KEY); INSERT INTO u VALUES ('a'), ('a');`)
		if !errors.Is(err, reconcile.ErrConflict) {
			t.Errorf("duplicate insert error = %v, want ErrConflict", err)
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
			t.Errorf("duplicate insert error = %v, want the *pgconn.PgError 23505 still in the chain", err)
		}
	})
	t.Run("a file's error is not the database's", func(t *testing.T) {
		// syscall.Errno has Timeout and Temporary: it is a net.Error, but
		// ENOTDIR from writing a report is no lost connection.
		err := &fs.PathError{Op: "mkdir", Path: "/tmp/x/reports", Err: syscall.ENOTDIR}
		if got := ledger.InterpretError(err); errors.Is(got, reconcile.ErrUnavailable) {
			t.Errorf("got %v, want it not ErrUnavailable", got)
		}
		lost := &net.OpError{Op: "write", Net: "unix", Err: syscall.EPIPE}
		if got := ledger.InterpretError(lost); !errors.Is(got, reconcile.ErrUnavailable) {
			t.Errorf("broken pipe: got %v, want ErrUnavailable", got)
		}
	})
	t.Run("other errors pass through", func(t *testing.T) {
		err := db.Exec(ctx, `SELECT 1/0`)
		if err == nil || errors.Is(err, reconcile.ErrConflict) || errors.Is(err, reconcile.ErrNotFound) {
			t.Errorf("division by zero error = %v, want a plain error", err)
		}
	})
}

// TestOpenTurnsJITOff: the job's one-pass queries are not compiled, unless
// the DSN says otherwise.
func TestOpenTurnsJITOff(t *testing.T) {
	ctx := context.Background()
	_, dsn := ledgertest.DB(t)
	for _, c := range []struct{ dsn, want string }{
		{dsn, "off"},
		{ledgertest.WithParam(dsn, "jit", "on"), "on"},
	} {
		db, err := ledger.Open(ctx, c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.Pool().QueryRow(ctx, "SHOW jit").Scan(&got); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if got != c.want {
			t.Errorf("jit with %q: got %s, want %s", c.dsn, got, c.want)
		}
	}
}
