// Package sftp fetches settlement files that a bank or a channel drops on
// an SFTP server: the job logs in with its key, checks the server's host
// key against a known_hosts file, looks for the file of the business day
// under a path made from a template, and streams it to fetch.Save.
//
// SFTP says nothing about a file but its size and modification time:
// there is no digest to check, no "no bill" answer, and nothing that says
// an upload is finished. A file is taken as complete when the bank's done
// marker for the day is there (Config.DoneMarker, when the bank writes
// one), or else when its size and modification time are the same at two
// looks Config.Settle apart; it must still be the same when it is opened
// and when its last byte is read. Until then it is fetch.ErrNotReady, as
// a file not there yet is. The channel's parser then reads it whole before
// it is put in place, so a file with control totals (a WeChat Pay or
// Alipay bill, an Adyen report) that was cut short is refused. A key, host
// key or permission the server will not accept is a *fetch.Refusal.
package sftp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strconv"
	"strings"
	"time"

	pkgsftp "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"reconcile"
	"reconcile/fetch"
	"reconcile/retry"
)

var _ fetch.Source = (*Source)(nil)

// DefaultTimeout bounds connecting, logging in and looking at the file
// when Config.Timeout is 0.
const DefaultTimeout = 30 * time.Second

// DefaultSettle is how far apart the two looks at a file are when
// Config.Settle is 0: a bank's export writes continuously, and one that
// pauses between rows does so for seconds, not half a minute; SFTP gives
// modification times to the second.
const DefaultSettle = 30 * time.Second

// Config says where the files are and how to log in.
type Config struct {
	// Addr is the server, "host" or "host:port" (port 22 when none).
	Addr string
	// User is the login name the bank gave.
	User string
	// Signer is the job's private key (see ParsePrivateKey); the bank
	// holds its public half.
	Signer ssh.Signer
	// KnownHosts is the path of a known_hosts file holding the server's
	// host key. It is required: the host key is always checked, and the
	// file is read again on every connection, so an edit applies on the
	// next try.
	KnownHosts string
	// RemotePath is the file's path on the server, with {date}
	// (YYYY-MM-DD) or {yyyymmdd} standing for the business day, e.g.
	// "outgoing/settlement_{yyyymmdd}.csv". A relative path is taken
	// from the login directory.
	RemotePath string
	// Timeout bounds one connection's setup: dial, SSH handshake, login,
	// the SFTP session and the look at the file (default 30s). The
	// download itself is bounded by the context Open is given.
	Timeout time.Duration
	// Retry is the job's retry policy for connections that fail; a
	// refused key or host key is never tried again.
	Retry retry.Policy
	// DoneMarker, when the bank writes one, is the path of the file it
	// puts beside the day's file once that is complete, with {date} or
	// {yyyymmdd} like RemotePath ("outgoing/settlement_{yyyymmdd}.done"):
	// the file is not ready until it is there, and is not looked at twice.
	DoneMarker string
	// Settle is how far apart the two looks at the file are when there is
	// no DoneMarker (default DefaultSettle).
	Settle time.Duration
	// Sleep waits between the two looks; nil is a real timer that gives up
	// when ctx ends (retry.Sleep).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Source is the SFTP drop of one bank or channel.
type Source struct {
	addr       string // host:port
	user       string
	signer     ssh.Signer
	knownHosts string
	remotePath string
	doneMarker string
	timeout    time.Duration
	settle     time.Duration
	sleep      func(ctx context.Context, d time.Duration) error
	retry      retry.Policy
}

// New checks cfg and returns its Source. It reads no file and makes no
// connection: check-config calls CheckKnownHosts for that.
func New(cfg Config) (*Source, error) {
	addr, err := hostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("sftp config: Addr: %w", err)
	}
	switch {
	case cfg.User == "":
		return nil, errors.New("sftp config: User is empty")
	case strings.ContainsFunc(cfg.User, isControlOrSpace):
		return nil, fmt.Errorf("sftp config: User %s: spaces or control characters", reconcile.Quote(cfg.User))
	case cfg.Signer == nil:
		return nil, errors.New("sftp config: Signer is nil: give the private key (see ParsePrivateKey)")
	case cfg.KnownHosts == "":
		return nil, errors.New("sftp config: KnownHosts is empty: the server's host key must be checked against a known_hosts file")
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("sftp config: Timeout %s is negative", cfg.Timeout)
	case cfg.Settle < 0:
		return nil, fmt.Errorf("sftp config: Settle %s is negative", cfg.Settle)
	}
	if err := checkTemplate(cfg.RemotePath); err != nil {
		return nil, fmt.Errorf("sftp config: RemotePath %s: %w", reconcile.Quote(cfg.RemotePath), err)
	}
	if cfg.DoneMarker != "" {
		if err := checkTemplate(cfg.DoneMarker); err != nil {
			return nil, fmt.Errorf("sftp config: DoneMarker %s: %w", reconcile.Quote(cfg.DoneMarker), err)
		}
		if cfg.DoneMarker == cfg.RemotePath {
			return nil, errors.New("sftp config: DoneMarker is RemotePath: the marker is a file of its own beside the day's file")
		}
	}
	src := &Source{addr: addr, user: cfg.User, signer: cfg.Signer, knownHosts: cfg.KnownHosts,
		remotePath: cfg.RemotePath, doneMarker: cfg.DoneMarker, timeout: cmp.Or(cfg.Timeout, DefaultTimeout),
		settle: cmp.Or(cfg.Settle, DefaultSettle), sleep: cfg.Sleep, retry: cfg.Retry}
	if src.sleep == nil {
		src.sleep = retry.Sleep
	}
	return src, nil
}

// Offer looks for the file of day on the server and offers it once it is
// complete: its done marker there, or, without one, the same size and
// modification time at two looks Settle apart. The connection it makes is
// closed before it returns, and Open makes another: an Offer holds
// nothing, so one the caller drops (Save refuses a file too large before
// opening it) leaks nothing, at the price of a second login per download.
func (s *Source) Offer(ctx context.Context, day reconcile.BusinessDay) (*fetch.Offer, error) {
	path := RemotePath(s.remotePath, day)
	hosts, err := loadKnownHosts(s.knownHosts, s.addr)
	if err != nil {
		return nil, err
	}
	var seen look
	err = s.try(ctx, func(ctx context.Context) error {
		c, err := s.connect(ctx, hosts)
		if err != nil {
			return err
		}
		defer c.Close()
		if s.doneMarker != "" {
			marker := RemotePath(s.doneMarker, day)
			if _, err := c.sftp.Stat(marker); err != nil {
				if err := s.fileError(marker, err); !errors.Is(err, fetch.ErrNotReady) {
					return err
				}
				return fmt.Errorf("%s: its done marker %s is not there yet: %w", path, marker, fetch.ErrNotReady)
			}
			seen, err = s.look(c, path)
			return err
		}
		first, err := s.look(c, path)
		if err != nil {
			return err
		}
		// The deadline bounds the setup: the wait must not run into it,
		// and the second look has one of its own.
		c.setupDone()
		if err := s.sleep(ctx, s.settle); err != nil {
			return err
		}
		c.nc.SetDeadline(time.Now().Add(s.timeout))
		if seen, err = s.look(c, path); err != nil {
			return err
		}
		if !seen.equal(first) {
			return fmt.Errorf("%s: still being written: %s, then %s %s later: %w", path, first, seen, s.settle, fetch.ErrNotReady)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &fetch.Offer{Name: path, Size: seen.size, Open: func(ctx context.Context) (io.ReadCloser, error) {
		return s.open(ctx, path, hosts, seen)
	}}, nil
}

// look is what SFTP tells of a file: its size and modification time (to
// the second).
type look struct {
	size  int64
	mtime time.Time
}

func (l look) equal(o look) bool { return l.size == o.size && l.mtime.Equal(o.mtime) }

func (l look) String() string {
	return fmt.Sprintf("%d bytes modified %s", l.size, l.mtime.UTC().Format(time.RFC3339))
}

// look looks at the file at path, a regular file with bytes in it.
func (s *Source) look(c *conn, path string) (look, error) {
	fi, err := c.sftp.Stat(path)
	if err != nil {
		return look{}, s.fileError(path, err)
	}
	return lookOf(path, fi)
}

func lookOf(path string, fi fs.FileInfo) (look, error) {
	size, err := regularSize(path, fi)
	if err != nil {
		return look{}, err
	}
	return look{size: size, mtime: fi.ModTime().Truncate(time.Second)}, nil
}

// open logs in again and opens path to stream, the file the offer looked
// at: one that changed since is not ready. The stream lives as long as
// ctx: its end closes the connection, which ends a Read under way.
func (s *Source) open(ctx context.Context, path string, hosts *hostKeys, seen look) (io.ReadCloser, error) {
	var out io.ReadCloser
	err := s.try(ctx, func(context.Context) error {
		// The retries' budget bounds the tries, not the download after:
		// the connection is made under the caller's ctx.
		c, err := s.connect(ctx, hosts)
		if err != nil {
			return err
		}
		f, err := c.sftp.Open(path)
		if err != nil {
			c.Close()
			return s.fileError(path, err)
		}
		// The file is looked at again: the bank may have written more of
		// it, or replaced it, since the offer.
		err = sameLook(f, path, seen, "since it was looked at")
		if err != nil {
			f.Close()
			c.Close()
			return err
		}
		c.setupDone()
		out = &download{f: f, c: c, path: path, seen: seen}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sameLook checks that the open file f is still the one seen: when the
// bank writes more of it or replaces it, it is not ready.
func sameLook(f *pkgsftp.File, path string, seen look, when string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", path, remote(err))
	}
	now, err := lookOf(path, fi)
	if err != nil {
		return err
	}
	if !now.equal(seen) {
		return fmt.Errorf("%s: changed %s (%s, now %s): still being written: %w", path, when, seen, now, fetch.ErrNotReady)
	}
	return nil
}

// try runs call under the retry policy: a connection that fails is tried
// again; a refusal or a file not there yet is an answer.
func (s *Source) try(ctx context.Context, call func(ctx context.Context) error) error {
	rt, cancel := s.retry.Start(ctx, transient)
	defer cancel()
	return rt.Do("sftp "+s.addr, call)
}

func transient(err error) (bool, time.Duration) {
	if _, ok := errors.AsType[*fetch.Refusal](err); ok {
		return false, 0
	}
	if errors.Is(err, fetch.ErrNotReady) {
		return false, 0
	}
	// pkg/sftp says so when the connection under a session dropped.
	if errors.Is(err, pkgsftp.ErrSSHFxConnectionLost) || errors.Is(err, pkgsftp.ErrSSHFxNoConnection) {
		return true, 0
	}
	return retry.Network(err), 0
}

// fileError says what the server's answer about path means.
func (s *Source) fileError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", path, fetch.ErrNotReady)
	case errors.Is(err, fs.ErrPermission):
		return &fetch.Refusal{Message: fmt.Sprintf("the server denies user %s access to %s (permission denied): ask the bank to grant it",
			reconcile.Quote(s.user), path)}
	}
	return fmt.Errorf("%s: %w", path, remote(err))
}

// regularSize is the size of the file fi describes, refusing anything
// but a regular file with bytes in it.
func regularSize(path string, fi fs.FileInfo) (int64, error) {
	switch {
	case fi.IsDir():
		return 0, fmt.Errorf("%s: a directory, not a file: check RemotePath", path)
	case !fi.Mode().IsRegular():
		return 0, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	case fi.Size() == 0:
		// A bank's upload creates the file before it writes it: an empty
		// file is one still being written, more often than a day with
		// nothing in it.
		return 0, fmt.Errorf("%s: empty so far: %w", path, fetch.ErrNotReady)
	}
	return fi.Size(), nil
}

// download is an open remote file; closing it ends the SFTP session and
// the SSH connection too.
type download struct {
	f    *pkgsftp.File
	c    *conn
	path string
	seen look // what the offer looked at
}

// Read reads the file. At its end the file is looked at once more: one
// the bank wrote to during the download is not ready, never a file the
// job takes whole.
func (d *download) Read(p []byte) (int, error) {
	n, err := d.f.Read(p)
	switch {
	case err == io.EOF:
		if serr := sameLook(d.f, d.path, d.seen, "while it was downloaded"); serr != nil {
			return n, serr
		}
	case err != nil:
		err = remote(err)
	}
	return n, err
}

func (d *download) Close() error {
	err := d.f.Close()
	d.c.Close()
	if err != nil {
		return fmt.Errorf("close %s: %w", d.f.Name(), remote(err))
	}
	return nil
}

// RemotePath is the template tmpl filled for day: {date} is YYYY-MM-DD,
// {yyyymmdd} the same without dashes.
func RemotePath(tmpl string, day reconcile.BusinessDay) string {
	return strings.NewReplacer("{date}", day.String(), "{yyyymmdd}", day.Date.Format("20060102")).Replace(tmpl)
}

// checkTemplate refuses a RemotePath that would name the same file every
// day, or that holds a character no file name should.
func checkTemplate(tmpl string) error {
	switch {
	case tmpl == "":
		return errors.New("empty")
	case strings.ContainsFunc(tmpl, isControl):
		return errors.New("holds a control character (NUL, newline…)")
	case !strings.Contains(tmpl, "{date}") && !strings.Contains(tmpl, "{yyyymmdd}"):
		return errors.New("has neither {date} nor {yyyymmdd}: it would fetch the same file every day")
	}
	rest := strings.NewReplacer("{date}", "", "{yyyymmdd}", "").Replace(tmpl)
	if i := strings.IndexAny(rest, "{}"); i >= 0 {
		return errors.New("has a brace that is not {date} or {yyyymmdd}")
	}
	return nil
}

// hostPort makes addr "host:port", port 22 when it has none.
func hostPort(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("empty")
	}
	if strings.Contains(addr, "://") {
		return "", fmt.Errorf("%s: want host or host:port, not a URL", reconcile.Quote(addr))
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		// No port. A bare IPv6 address has colons of its own.
		host, port = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), "22"
		if strings.Contains(host, ":") && net.ParseIP(host) == nil {
			return "", fmt.Errorf("%s: want host or host:port", reconcile.Quote(addr))
		}
	}
	if host == "" || strings.ContainsFunc(host, isControlOrSpace) || strings.ContainsAny(host, "[]/@") {
		return "", fmt.Errorf("%s: not a host name", reconcile.Quote(addr))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("%s: port %s is not a number from 1 to 65535", reconcile.Quote(addr), reconcile.Quote(port))
	}
	return net.JoinHostPort(host, port), nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

func isControlOrSpace(r rune) bool { return isControl(r) || r == ' ' }
