package sftp_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pkgsftp "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// TestMain fails the tests when goroutines outlive them: a connection,
// an SFTP session or a server the client or the tests did not close.
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				fmt.Fprintf(os.Stderr, "goroutines leaked: got %d, want %d\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
				code = 1
				break
			}
		}
	}
	os.Exit(code)
}

// Keys are made once per test binary: RSA is slow.
var (
	rsaKey = sync.OnceValue(func() *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		return k
	})
	userKey  = sync.OnceValue(func() ed25519.PrivateKey { return newEd25519() })
	otherKey = sync.OnceValue(func() ed25519.PrivateKey { return newEd25519() })
)

func newEd25519() ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func signer(t *testing.T, key any) ssh.Signer {
	t.Helper()
	s, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// server is an SFTP server in the test process, as a bank runs one: it
// has its own host key, lets in only the user key, and serves the files
// of a temporary directory.
type server struct {
	addr     string
	dir      string
	hostKeys []ssh.Signer

	// Set before start.
	dropFirst int32           // connections closed at once, before the handshake
	hang      bool            // accept connections and say nothing
	denied    map[string]bool // paths the server refuses to show
	failWith  error           // the answer to every Stat, when set
	dropStat  atomic.Int32    // Stats answered by closing the connection
	firstRead func()          // called once, at the first read of a file's bytes

	conns    atomic.Int32  // TCP connections accepted
	sessions atomic.Int32  // SFTP sessions started
	live     atomic.Int32  // connections not yet closed
	accepted chan struct{} // a token per connection accepted

	root     *os.Root
	readOnce sync.Once
	ln       net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	nc       []net.Conn
}

func newServer(t *testing.T) *server {
	t.Helper()
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &server{dir: dir, root: root, hostKeys: []ssh.Signer{signer(t, newEd25519())},
		accepted: make(chan struct{}, 100)}
}

// start listens on 127.0.0.1 and serves until the test ends; the cleanup
// closes the listener and every connection and waits for every goroutine.
func (s *server) start(t *testing.T) {
	t.Helper()
	user := signer(t, userKey()).PublicKey().Marshal()
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if c.User() == "recon" && string(key.Marshal()) == string(user) {
			return &ssh.Permissions{}, nil
		}
		return nil, errors.New("unknown key")
	}}
	for _, k := range s.hostKeys {
		cfg.AddHostKey(k)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln, s.addr = ln, ln.Addr().String()
	s.wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.nc = append(s.nc, nc)
			s.mu.Unlock()
			s.live.Add(1)
			s.wg.Go(func() { s.serve(nc, cfg) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, nc := range s.nc {
			nc.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
}

func (s *server) serve(nc net.Conn, cfg *ssh.ServerConfig) {
	defer s.live.Add(-1)
	defer nc.Close()
	n := s.conns.Add(1)
	select {
	case s.accepted <- struct{}{}:
	default:
	}
	switch {
	case n <= s.dropFirst:
		return
	case s.hang:
		io.Copy(io.Discard, nc) // until the client gives up
		return
	}
	sc, chans, reqs, err := ssh.NewServerConn(nc, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	s.wg.Go(func() { ssh.DiscardRequests(reqs) })
	for nch := range chans {
		if nch.ChannelType() != "session" {
			nch.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, creqs, err := nch.Accept()
		if err != nil {
			continue
		}
		s.wg.Go(func() { s.session(nc, ch, creqs) })
	}
}

// session serves SFTP once the client asks for the subsystem.
func (s *server) session(nc net.Conn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	start, done := make(chan struct{}, 1), make(chan struct{})
	s.wg.Go(func() {
		defer close(done)
		for req := range reqs {
			ok := req.Type == "subsystem" && subsystem(req.Payload) == "sftp"
			req.Reply(ok, nil)
			if ok {
				select {
				case start <- struct{}{}:
				default:
				}
			}
		}
	})
	select {
	case <-start:
	case <-done:
		return
	}
	s.sessions.Add(1)
	h := handler{s, nc}
	srv := pkgsftp.NewRequestServer(ch, pkgsftp.Handlers{FileGet: h, FilePut: h, FileCmd: h, FileList: h})
	srv.Serve()
	srv.Close()
}

// subsystem is the name a "subsystem" request's payload carries (an SSH
// string: a length, then the bytes).
func subsystem(p []byte) string {
	if len(p) < 4 || binary.BigEndian.Uint32(p) != uint32(len(p)-4) {
		return ""
	}
	return string(p[4:])
}

// closed waits until the client has closed every connection it made.
func (s *server) closed(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); s.live.Load() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("connections still open: got %d, want 0 (the client leaks them)", s.live.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// put writes a file under the server's directory.
func (s *server) put(t *testing.T, name string, data []byte) {
	t.Helper()
	p := filepath.Join(s.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// touch sets the modification time of a file under the server's
// directory.
func (s *server) touch(t *testing.T, name string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(s.dir, filepath.FromSlash(name)), mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// knownHosts writes a known_hosts file of lines and returns its path.
func knownHostsFile(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "known_hosts")
	var b []byte
	for _, l := range lines {
		b = append(b, l+"\n"...)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// line is the known_hosts line of key for addr.
func line(addr string, key ssh.PublicKey) string {
	return knownhosts.Line([]string{knownhosts.Normalize(addr)}, key)
}

// handler serves the server's directory read-only, through os.Root so
// that no path leaves it.
type handler struct {
	s  *server
	nc net.Conn
}

func (h handler) name(p string) (string, error) {
	p = path.Clean("/" + p)
	if h.s.denied[p] {
		return "", pkgsftp.ErrSSHFxPermissionDenied
	}
	if p == "/" {
		return ".", nil
	}
	return p[1:], nil
}

func (h handler) Fileread(r *pkgsftp.Request) (io.ReaderAt, error) {
	name, err := h.name(r.Filepath)
	if err != nil {
		return nil, err
	}
	f, err := h.s.root.Open(name)
	if err != nil || h.s.firstRead == nil {
		return f, err
	}
	return &hookedReader{File: f, once: &h.s.readOnce, hook: h.s.firstRead}, nil
}

// hookedReader calls hook before its first read: the bank writing more
// of a file while it is downloaded.
type hookedReader struct {
	*os.File
	once *sync.Once
	hook func()
}

func (r *hookedReader) ReadAt(p []byte, off int64) (int, error) {
	r.once.Do(r.hook)
	return r.File.ReadAt(p, off)
}

func (h handler) Filelist(r *pkgsftp.Request) (pkgsftp.ListerAt, error) {
	if r.Method != "Stat" {
		return nil, pkgsftp.ErrSSHFxOpUnsupported
	}
	if h.s.failWith != nil {
		return nil, h.s.failWith
	}
	if h.s.dropStat.Add(-1) >= 0 {
		h.nc.Close()
		return nil, errors.New("dropped")
	}
	name, err := h.name(r.Filepath)
	if err != nil {
		return nil, err
	}
	fi, err := h.s.root.Stat(name)
	if err != nil {
		return nil, err
	}
	return listerAt{fi}, nil
}

func (h handler) Filewrite(*pkgsftp.Request) (io.WriterAt, error) {
	return nil, pkgsftp.ErrSSHFxPermissionDenied
}

func (h handler) Filecmd(*pkgsftp.Request) error { return pkgsftp.ErrSSHFxPermissionDenied }

type listerAt []fs.FileInfo

func (l listerAt) ListAt(out []fs.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	return copy(out, l[off:]), nil
}
