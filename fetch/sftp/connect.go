package sftp

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	pkgsftp "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"reconcile"
	"reconcile/fetch"
)

// conn is one logged-in SFTP session and the SSH connection under it.
type conn struct {
	nc    net.Conn
	ssh   *ssh.Client
	sftp  *pkgsftp.Client
	stop  func() bool // unhooks the close on ctx's end
	close sync.Once
}

// connect dials the server, checks its host key, logs in and starts SFTP.
// The handshake and the SFTP calls take no context, so the end of ctx
// closes the connection under them; a deadline bounds the setup until
// setupDone.
func (s *Source) connect(ctx context.Context, hosts *hostKeys) (*conn, error) {
	d := net.Dialer{Timeout: s.timeout}
	nc, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", s.addr, err)
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	if err := nc.SetDeadline(time.Now().Add(s.timeout)); err != nil {
		stop()
		nc.Close()
		return nil, fmt.Errorf("connect to %s: %w", s.addr, err)
	}
	check := &hostCheck{hosts: hosts}
	cfg := &ssh.ClientConfig{
		User:            s.user,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(s.signer)},
		HostKeyCallback: check.verify,
		// Only the algorithms of the keys known_hosts holds for the host:
		// a server offering another kind of key first would otherwise be
		// taken for one whose key changed.
		HostKeyAlgorithms: hosts.algorithms,
	}
	sc, chans, reqs, err := ssh.NewClientConn(nc, s.addr, cfg)
	if err != nil {
		stop()
		nc.Close()
		return nil, s.loginError(ctx, check, err)
	}
	client := ssh.NewClient(sc, chans, reqs)
	fc, err := pkgsftp.NewClient(client)
	if err != nil {
		stop()
		client.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("start sftp on %s: %w", s.addr, ctx.Err())
		}
		return nil, fmt.Errorf("start sftp on %s: %w", s.addr, remote(err))
	}
	return &conn{nc: nc, ssh: client, sftp: fc, stop: stop}, nil
}

// setupDone lifts the setup's deadline: a download takes as long as its
// context allows.
func (c *conn) setupDone() { c.nc.SetDeadline(time.Time{}) }

// Close ends the SFTP session and the connection. Its errors are not
// returned: a connection torn down says nothing about the bytes read.
func (c *conn) Close() {
	c.close.Do(func() {
		c.stop()
		c.sftp.Close()
		c.ssh.Close()
	})
}

// loginError says why the handshake or the login failed.
func (s *Source) loginError(ctx context.Context, check *hostCheck, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("log in to %s: %w", s.addr, ctx.Err())
	}
	if r := check.refusal(s.addr); r != nil {
		return r
	}
	// x/crypto/ssh has no error type for it: the text is its contract.
	if strings.Contains(err.Error(), "ssh: unable to authenticate") {
		key := s.signer.PublicKey()
		return &fetch.Refusal{Message: fmt.Sprintf("the server refused the key for user %s (%s %s): check that the bank holds this public key for this user",
			reconcile.Quote(s.user), key.Type(), ssh.FingerprintSHA256(key))}
	}
	return fmt.Errorf("log in to %s: %w", s.addr, remote(err))
}

// hostKeys is a known_hosts file read for one host.
type hostKeys struct {
	path       string
	callback   ssh.HostKeyCallback
	known      bool     // the file has a line for the host
	algorithms []string // of the host's keys, for the handshake
}

// readKnownHosts reads the known_hosts file at path and looks up addr
// (host:port) in it.
func readKnownHosts(path, addr string) (*hostKeys, error) {
	cb, err := knownhosts.New(path)
	if err != nil {
		return nil, fmt.Errorf("known_hosts %s: %w", path, err)
	}
	h := &hostKeys{path: path, callback: cb}
	// The callback is asked about a key no file holds: the KeyError it
	// answers lists the keys the file has for the host.
	err = cb(addr, &net.TCPAddr{IP: net.IPv4zero, Port: 22}, probeKey())
	ke, ok := errors.AsType[*knownhosts.KeyError](err)
	switch {
	case err == nil:
		h.known = true // the probe itself is listed: nothing to narrow the algorithms to
	case ok:
		h.known = len(ke.Want) > 0
		for _, k := range ke.Want {
			for _, a := range keyAlgorithms(k.Key.Type()) {
				if !slices.Contains(h.algorithms, a) {
					h.algorithms = append(h.algorithms, a)
				}
			}
		}
	case errors.As(err, new(*knownhosts.RevokedError)):
		h.known = true
	default:
		return nil, fmt.Errorf("known_hosts %s: look up %s: %w", path, addr, err)
	}
	return h, nil
}

// loadKnownHosts is readKnownHosts for a connection: a file without the
// host is a refusal, as the server's key would be.
func loadKnownHosts(path, addr string) (*hostKeys, error) {
	h, err := readKnownHosts(path, addr)
	if err != nil {
		return nil, fmt.Errorf("sftp %s: %w", addr, err)
	}
	if !h.known {
		return nil, fmt.Errorf("sftp %s: %w", addr, &fetch.Refusal{Message: fmt.Sprintf(
			"%s: add the server's host key line, its fingerprint checked with the bank", noLine(path, addr))})
	}
	return h, nil
}

func noLine(path, addr string) string {
	return fmt.Sprintf("no known_hosts line for host %s in %s", knownhosts.Normalize(addr), path)
}

// probeKey is an Ed25519 key of zero bytes: no server has it.
var probeKey = sync.OnceValue(func() ssh.PublicKey {
	k, err := ssh.NewPublicKey(ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)))
	if err != nil {
		panic(err) // a constant key of the right size: cannot happen
	}
	return k
})

// keyAlgorithms are the handshake's host key algorithms for a key type:
// an RSA key signs with SHA-2 or SHA-1.
func keyAlgorithms(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

// hostCheck checks the host key of one handshake against known_hosts and
// keeps what it found, to say afterwards why a handshake failed.
type hostCheck struct {
	hosts   *hostKeys
	mu      sync.Mutex // verify runs on the handshake's goroutine
	offered ssh.PublicKey
	err     error
}

func (h *hostCheck) verify(host string, addr net.Addr, key ssh.PublicKey) error {
	err := h.hosts.callback(host, addr, key)
	h.mu.Lock()
	h.offered, h.err = key, err
	h.mu.Unlock()
	return err
}

// refusal is the host key's refusal, nil when the key was accepted or
// never seen.
func (h *hostCheck) refusal(addr string) *fetch.Refusal {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		return nil
	}
	offered := h.offered.Type() + " " + ssh.FingerprintSHA256(h.offered)
	if ke, ok := errors.AsType[*knownhosts.KeyError](h.err); ok {
		if len(ke.Want) == 0 {
			return &fetch.Refusal{Message: fmt.Sprintf("%s; the server offered %s: add its line once the bank confirms that fingerprint",
				noLine(h.hosts.path, addr), offered)}
		}
		return &fetch.Refusal{Message: fmt.Sprintf("the host key of %s does not match known_hosts (%s line %d): the server offered %s. "+
			"The connection may be intercepted, or the bank changed its key: check with the bank before editing known_hosts",
			addr, ke.Want[0].Filename, ke.Want[0].Line, offered)}
	}
	if re, ok := errors.AsType[*knownhosts.RevokedError](h.err); ok {
		return &fetch.Refusal{Message: fmt.Sprintf("the host key of %s (%s) is marked @revoked in known_hosts (%s line %d)",
			addr, offered, re.Revoked.Filename, re.Revoked.Line)}
	}
	return &fetch.Refusal{Message: fmt.Sprintf("the host key of %s (%s) is not accepted: %v", addr, offered, h.err)}
}

// remoteError is an error whose words the server chose in part (an SFTP
// status message, a disconnect reason): shown printable and cut short,
// and still unwrapping, so a dropped connection is still one.
type remoteError struct{ err error }

func remote(err error) error {
	if err == nil {
		return nil
	}
	return &remoteError{err: err}
}

func (e *remoteError) Error() string { return shorten(reconcile.Printable(e.err.Error()), 200) }

func (e *remoteError) Unwrap() error { return e.err }

// shorten cuts s to n runes, saying how long it was.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "… (" + strconv.Itoa(len(s)) + " bytes)"
		}
		i++
	}
	return s
}
