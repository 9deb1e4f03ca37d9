// Package sftp fetches settlement files that a bank or a channel drops on
// an SFTP server: the job logs in with its key, checks the server's host
// key against a known_hosts file, looks for the file of the business day
// under a path made from a template, and streams it to fetch.Save.
//
// SFTP says nothing about a file but its size: there is no digest to
// check and no "no bill" answer. A file that is not there yet is
// fetch.ErrNotReady; a key, host key or permission the server will not
// accept is a *fetch.Refusal.
package sftp

import (
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
}

// Source is the SFTP drop of one bank or channel.
type Source struct {
	addr       string // host:port
	user       string
	signer     ssh.Signer
	knownHosts string
	remotePath string
	timeout    time.Duration
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
	}
	if err := checkTemplate(cfg.RemotePath); err != nil {
		return nil, fmt.Errorf("sftp config: RemotePath %s: %w", reconcile.Quote(cfg.RemotePath), err)
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	return &Source{addr: addr, user: cfg.User, signer: cfg.Signer, knownHosts: cfg.KnownHosts,
		remotePath: cfg.RemotePath, timeout: timeout, retry: cfg.Retry}, nil
}

// Offer looks for the file of day on the server. The connection it makes
// is closed before it returns, and Open makes another: an Offer holds
// nothing, so one the caller drops (Save refuses a file too large before
// opening it) leaks nothing, at the price of a second login per download.
func (s *Source) Offer(ctx context.Context, day reconcile.BusinessDay) (*fetch.Offer, error) {
	path := RemotePath(s.remotePath, day)
	hosts, err := loadKnownHosts(s.knownHosts, s.addr)
	if err != nil {
		return nil, err
	}
	var size int64
	err = s.try(ctx, func(ctx context.Context) error {
		c, err := s.connect(ctx, hosts)
		if err != nil {
			return err
		}
		defer c.Close()
		fi, err := c.sftp.Stat(path)
		if err != nil {
			return s.fileError(path, err)
		}
		size, err = regularSize(path, fi)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &fetch.Offer{Name: path, Size: size, Open: func(ctx context.Context) (io.ReadCloser, error) {
		return s.open(ctx, path, hosts)
	}}, nil
}

// open logs in again and opens path to stream. The stream lives as long as
// ctx: its end closes the connection, which ends a Read under way.
func (s *Source) open(ctx context.Context, path string, hosts *hostKeys) (io.ReadCloser, error) {
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
		// The file is looked at again: the path may have been replaced
		// by something else since the offer.
		fi, err := f.Stat()
		if err == nil {
			_, err = regularSize(path, fi)
		} else {
			err = s.fileError(path, err)
		}
		if err != nil {
			f.Close()
			c.Close()
			return err
		}
		c.setupDone()
		out = &download{f: f, c: c}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
	f *pkgsftp.File
	c *conn
}

func (d *download) Read(p []byte) (int, error) {
	n, err := d.f.Read(p)
	if err != nil && err != io.EOF {
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
