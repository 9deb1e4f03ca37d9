// Package ledger is the PostgreSQL adapter of the reconciliation job: it
// reads the local orders, refunds and idempotency records, and writes runs,
// findings and reversal journals. Every write of a run's outcome happens in
// one transaction, so a crash or a concurrent run can neither double an
// entry nor lose a finding.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"reconcile"
)

// DB is a pool of connections to the job's database.
type DB struct {
	pool *pgxpool.Pool
}

// Open connects to the database named by dsn, a URL or key/value
// connection string, and checks that it answers. Its errors never contain
// the password.
func Open(ctx context.Context, dsn string) (*DB, error) {
	if err := checkURL(dsn); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", parseTrouble(dsn, err))
	}
	password := cfg.ConnConfig.Password
	// The job's queries read millions of rows once each: compiling them
	// (PostgreSQL's JIT, on for costly plans) takes about 130 ms a query
	// and saves nothing. A DSN that sets jit itself keeps its setting.
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, openError(dsn, password, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, openError(dsn, password, err)
	}
	return &DB{pool: pool}, nil
}

// Close closes every connection of the pool.
func (db *DB) Close() { db.pool.Close() }

// Ping checks that the database answers, for a health check: a connection
// of the pool, or a new one, runs an empty statement.
func (db *DB) Ping(ctx context.Context) error { return interpretError(db.pool.Ping(ctx)) }

// Pool is the underlying pool, for callers that need plain SQL.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Exec runs a script of one or more statements, such as a test fixture.
func (db *DB) Exec(ctx context.Context, sql string) error {
	// Without arguments pgx uses the simple protocol, which accepts
	// several statements in one string.
	if _, err := db.pool.Exec(ctx, sql); err != nil {
		return fmt.Errorf("exec script: %w", interpretError(err))
	}
	return nil
}

// interpretError gives errors from PostgreSQL their domain meaning: no rows
// is reconcile.ErrNotFound, a unique violation is reconcile.ErrConflict.
// The original stays in the chain for errors.As.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", reconcile.ErrNotFound, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("%w: %w", reconcile.ErrConflict, err)
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || (pgErr == nil && pgconn.SafeToRetry(err)) || isConnLost(err) {
		return fmt.Errorf("%w: %w", reconcile.ErrUnavailable, err)
	}
	return err
}

// checkURL refuses a URL DSN that the driver would read differently from
// what was meant: a password with a raw '@', '/', '?', '#' or a space
// moves where the driver thinks the host, the database or the query
// begins, so the password's tail becomes a host name that a "lookup …"
// error quotes, or a database name that every connection error quotes.
// The message says what to encode and quotes nothing of the DSN.
func checkURL(dsn string) error {
	rest, ok := strings.CutPrefix(dsn, "postgres://")
	if !ok {
		if rest, ok = strings.CutPrefix(dsn, "postgresql://"); !ok {
			return nil
		}
	}
	const encode = "percent-encode it in the DSN (%40 for @, %2F for /, %3F for ?, %23 for #, %20 for a space) or use the key=value form with the password quoted"
	if strings.ContainsAny(dsn, " \t\r\n") {
		return errors.New("the database URL holds a space or a line break; " + encode)
	}
	if strings.Count(dsn, "@") > 1 {
		return errors.New("the database URL holds more than one '@': a password with an '@' must be percent-encoded; " + encode)
	}
	if at := strings.IndexByte(rest, '@'); at >= 0 && strings.ContainsAny(rest[:at], "/?#") {
		return errors.New("the user or password of the database URL holds a '/', '?' or '#'; " + encode)
	}
	return nil
}

// parseTrouble is why the driver could not parse a DSN, without its
// text: the driver's message quotes the DSN with its password hidden as
// well as it can guess where the password is, and a DSN that does not
// parse is exactly where it guesses wrong.
func parseTrouble(dsn string, err error) error {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return &redactedError{err: err, dsn: dsn}
	}
	form := "key=value pairs (quote a value with spaces in '…')"
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		form = "a URL (percent-encode special characters of the password)"
	}
	return fmt.Errorf("the DSN cannot be parsed as %s", form)
}

// openError wraps a connection failure with the redacted DSN, and removes
// the password from the text of the cause as well: pgx redacts only the
// connection string forms it recognises, and a driver message might quote
// one it does not.
func openError(dsn, password string, err error) error {
	return fmt.Errorf("open database %s: %w", RedactDSN(dsn), &redactedError{err: err, secret: password, dsn: dsn})
}

// redactedError is err with its text scrubbed of a secret. Unwrap keeps
// errors.Is working for context cancellation and the like.
type redactedError struct {
	err    error
	secret string
	dsn    string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	if e.dsn != "" && strings.Contains(msg, e.dsn) {
		msg = strings.ReplaceAll(msg, e.dsn, RedactDSN(e.dsn))
	}
	// A password of one or two characters would hide every such pair of
	// letters of the message and say nothing; one that long is no secret.
	if len(e.secret) > 2 {
		msg = strings.ReplaceAll(msg, e.secret, "xxxxx")
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }

// passwordKV matches a password in a key/value connection string, quoted
// (with backslash escapes) or not, with optional spaces around "=".
var passwordKV = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s]*)`)

// RedactDSN returns dsn with its password replaced by xxxxx, for logs and
// error messages. It understands URL (postgres://user:pw@host/db?password=)
// and key/value (host=h password=pw) forms; what it cannot parse it
// redacts generously rather than risk showing a secret.
func RedactDSN(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return redactURL(dsn)
	}
	return passwordKV.ReplaceAllString(dsn, "${1}xxxxx")
}

func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		// Unparseable, perhaps because the password holds a raw '/', '#'
		// or '?': keep the scheme and what follows the last '@', which is
		// where a password can no longer be.
		scheme, rest, _ := strings.Cut(dsn, "://")
		if i := strings.LastIndex(rest, "@"); i >= 0 {
			return scheme + "://xxxxx@" + rest[i+1:]
		}
		return scheme + "://xxxxx"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	redacted := false
	for k := range q {
		if strings.EqualFold(k, "password") {
			q.Set(k, "xxxxx")
			redacted = true
		}
	}
	if redacted {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// isConnLost reports an error of a connection that went away under a
// query: the server stopped or the network broke.
func isConnLost(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 57P01..57P03: the administrator or a crash ended the session.
		return strings.HasPrefix(pgErr.Code, "57P")
	}
	// A network operation that failed or timed out. Not any net.Error:
	// a plain errno (ENOTDIR from a file the job writes) is one too.
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	var netErr net.Error
	var errno syscall.Errno
	if errors.As(err, &netErr) && netErr.Timeout() && !errors.As(err, &errno) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
