package sftp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"reconcile"
	"reconcile/fetch"
	"reconcile/fetch/sftp"
	"reconcile/retry"
	"reconcile/retry/retrytest"
)

const (
	template = "outgoing/{date}/settle_{yyyymmdd}.csv"
	dayPath  = "outgoing/2026-11-28/settle_20261128.csv"
)

func day(t *testing.T) reconcile.BusinessDay {
	t.Helper()
	d, err := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// source is a Source for srv that knows its host key and logs in with the
// user key, and does not wait between its two looks at a file; edit
// changes the config before New.
func source(t *testing.T, srv *server, waits *retrytest.Waits, edit func(*sftp.Config)) *sftp.Source {
	t.Helper()
	cfg := sftp.Config{
		Addr:       srv.addr,
		User:       "recon",
		Signer:     signer(t, userKey()),
		KnownHosts: knownHostsFile(t, line(srv.addr, srv.hostKeys[0].PublicKey())),
		RemotePath: template,
		Timeout:    5 * time.Second,
		Retry:      retry.Policy{Attempts: 3, Sleep: waits.Sleep},
		Sleep:      func(ctx context.Context, d time.Duration) error { return ctx.Err() },
	}
	if edit != nil {
		edit(&cfg)
	}
	src, err := sftp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestOfferSave(t *testing.T) {
	srv := newServer(t)
	// More than one SFTP packet (32 KiB), so the file comes in many reads.
	want := make([]byte, 300<<10+17)
	rand.Read(want)
	srv.put(t, dayPath, want)
	srv.start(t)
	src := source(t, srv, &retrytest.Waits{}, nil)

	offer, err := src.Offer(t.Context(), day(t))
	if err != nil {
		t.Fatalf("Offer: %v", err)
	}
	if offer.Name != dayPath || offer.Size != int64(len(want)) || offer.Digest != nil {
		t.Errorf("offer: got %q, %d bytes, digest %v; want %q, %d bytes, no digest", offer.Name, offer.Size, offer.Digest, dayPath, len(want))
	}
	// The offer holds no connection: the one it made is closed already.
	srv.closed(t)
	if got := srv.conns.Load(); got != 1 {
		t.Errorf("connections after Offer: got %d, want 1", got)
	}

	dest := filepath.Join(t.TempDir(), "settle.csv")
	saved, err := fetch.Save(t.Context(), offer, dest, 0, nil)
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	got, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || saved.Bytes != int64(len(want)) || !saved.Changed {
		t.Errorf("saved: got %d bytes (Saved %+v), want the server's %d bytes byte for byte", len(got), saved, len(want))
	}
	srv.closed(t)
	if got, want := srv.conns.Load(), int32(2); got != want {
		t.Errorf("connections: got %d, want %d (Offer's and Open's)", got, want)
	}
}

// TestOfferSizeChanged shows a file the bank rewrote between the offer and
// the download is not ready: it is still being written.
func TestOfferSizeChanged(t *testing.T) {
	srv := newServer(t)
	srv.put(t, dayPath, []byte("id,amount\n1,100\n"))
	srv.start(t)
	src := source(t, srv, &retrytest.Waits{}, nil)
	offer, err := src.Offer(t.Context(), day(t))
	if err != nil {
		t.Fatal(err)
	}
	srv.put(t, dayPath, []byte("id,amount\n1,100\n2,250\n"))
	dest := filepath.Join(t.TempDir(), "settle.csv")
	if _, err := fetch.Save(t.Context(), offer, dest, 0, nil); !errors.Is(err, fetch.ErrNotReady) || !strings.Contains(err.Error(), "changed since it was looked at") {
		t.Errorf("Save of a file that grew: got %v, want not ready, changed since it was looked at", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("destination after a refused download: got %v, want no file", err)
	}
	srv.closed(t)
}

func TestOfferAnswers(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, srv *server)
		is      error  // errors.Is, when set
		refusal string // in the *fetch.Refusal, when one is wanted
		plain   string // in a plain error, when one is wanted
	}{
		{name: "not there yet", setup: func(t *testing.T, srv *server) { srv.put(t, "outgoing/2026-11-27/settle_20261127.csv", []byte("x")) },
			is: fetch.ErrNotReady},
		{name: "empty so far", setup: func(t *testing.T, srv *server) { srv.put(t, dayPath, nil) }, is: fetch.ErrNotReady},
		{name: "permission denied", setup: func(t *testing.T, srv *server) {
			srv.put(t, dayPath, []byte("x"))
			srv.denied = map[string]bool{"/" + dayPath: true}
		}, refusal: `denies user "recon" access to ` + dayPath},
		{name: "a directory", setup: func(t *testing.T, srv *server) { srv.put(t, dayPath+"/inner", []byte("x")) },
			plain: dayPath + ": a directory, not a file"},
		{name: "hostile status message", setup: func(t *testing.T, srv *server) {
			srv.failWith = errors.New("disk\x00full\n<!channel> " + strings.Repeat("x", 20<<10))
		}, plain: dayPath + `: sftp: "disk\x00full\n<!channel> xxx`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			tt.setup(t, srv)
			srv.start(t)
			waits := &retrytest.Waits{}
			offer, err := source(t, srv, waits, nil).Offer(t.Context(), day(t))
			if err == nil {
				t.Fatalf("Offer: got %q, want an error", offer.Name)
			}
			refusal, isRefusal := errors.AsType[*fetch.Refusal](err)
			switch {
			case tt.is != nil && !errors.Is(err, tt.is):
				t.Errorf("Offer: got %v, want %v", err, tt.is)
			case tt.refusal != "" && (!isRefusal || !strings.Contains(refusal.Message, tt.refusal)):
				t.Errorf("Offer: got %v, want a refusal saying %q", err, tt.refusal)
			case tt.plain != "" && (isRefusal || errors.Is(err, fetch.ErrNotReady) || !strings.Contains(err.Error(), tt.plain)):
				t.Errorf("Offer: got %v (%T), want a plain error saying %q", err, err, tt.plain)
			}
			if strings.ContainsAny(err.Error(), "\x00\n") || len(err.Error()) > 1000 {
				t.Errorf("Offer error: got %d bytes with control characters in %q…, want it printable and short", len(err.Error()), err.Error()[:min(len(err.Error()), 100)])
			}
			if got := srv.conns.Load(); got != 1 || len(waits.All()) != 0 {
				t.Errorf("connections: got %d and %d waits, want 1 and none: an answer is not retried", got, len(waits.All()))
			}
			srv.closed(t)
		})
	}
}

func TestHostKeyRefused(t *testing.T) {
	tests := []struct {
		name     string
		hosts    func(srv *server) []string
		want     string
		conns    int32
		sessions int32
	}{
		{name: "host key changed", hosts: func(srv *server) []string {
			return []string{line(srv.addr, signer(t, otherKey()).PublicKey())}
		}, want: "does not match known_hosts", conns: 1},
		{name: "host not in known_hosts", hosts: func(srv *server) []string {
			return []string{line("sftp.bank.example", srv.hostKeys[0].PublicKey())}
		}, want: "no known_hosts line for host [127.0.0.1]:", conns: 0},
		{name: "host key revoked", hosts: func(srv *server) []string {
			return []string{"@revoked * " + string(bytes.TrimSpace(ssh.MarshalAuthorizedKey(srv.hostKeys[0].PublicKey()))),
				line(srv.addr, srv.hostKeys[0].PublicKey())}
		}, want: "marked @revoked", conns: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.put(t, dayPath, []byte("id,amount\n"))
			srv.start(t)
			waits := &retrytest.Waits{}
			src := source(t, srv, waits, func(c *sftp.Config) { c.KnownHosts = knownHostsFile(t, tt.hosts(srv)...) })
			_, err := src.Offer(t.Context(), day(t))
			if r, ok := errors.AsType[*fetch.Refusal](err); !ok || !strings.Contains(r.Message, tt.want) {
				t.Fatalf("Offer: got %v, want a refusal saying %q", err, tt.want)
			}
			if got, gotSessions := srv.conns.Load(), srv.sessions.Load(); got != tt.conns || gotSessions != 0 || len(waits.All()) != 0 {
				t.Errorf("got %d connections, %d SFTP sessions, %d waits; want %d, none, none", got, gotSessions, len(waits.All()), tt.conns)
			}
			srv.closed(t)
		})
	}
}

// TestHostKeyAlgorithms shows the handshake asks for the kind of key
// known_hosts holds: the server prefers Ed25519, the file has its RSA key.
func TestHostKeyAlgorithms(t *testing.T) {
	srv := newServer(t)
	rsaHost := signer(t, rsaKey())
	srv.hostKeys = append(srv.hostKeys, rsaHost)
	srv.put(t, dayPath, []byte("id,amount\n"))
	srv.start(t)
	src := source(t, srv, &retrytest.Waits{}, func(c *sftp.Config) { c.KnownHosts = knownHostsFile(t, line(srv.addr, rsaHost.PublicKey())) })
	if _, err := src.Offer(t.Context(), day(t)); err != nil {
		t.Errorf("Offer with only the RSA host key known: got %v, want the file", err)
	}
	srv.closed(t)
}

func TestKeyRefused(t *testing.T) {
	srv := newServer(t)
	srv.put(t, dayPath, []byte("id,amount\n"))
	srv.start(t)
	waits := &retrytest.Waits{}
	other := signer(t, otherKey())
	src := source(t, srv, waits, func(c *sftp.Config) { c.Signer = other })
	_, err := src.Offer(t.Context(), day(t))
	want := `the server refused the key for user "recon" (ssh-ed25519 ` + ssh.FingerprintSHA256(other.PublicKey())
	if r, ok := errors.AsType[*fetch.Refusal](err); !ok || !strings.Contains(r.Message, want) {
		t.Fatalf("Offer: got %v, want a refusal saying %q", err, want)
	}
	if got := srv.conns.Load(); got != 1 || srv.sessions.Load() != 0 || len(waits.All()) != 0 {
		t.Errorf("got %d connections, %d sessions, %d waits; want 1, none, none: a refused key is not retried", got, srv.sessions.Load(), len(waits.All()))
	}
	srv.closed(t)
}

func TestRetry(t *testing.T) {
	tests := []struct {
		name      string
		dropFirst int32 // connections closed before the handshake
		dropStat  int32 // connections closed when the client asks for the file
		ok        bool
		conns     int32
	}{
		{name: "dropped once then works", dropFirst: 1, ok: true, conns: 2},
		{name: "dropped during the stat then works", dropStat: 1, ok: true, conns: 2},
		{name: "dropped every time", dropFirst: 100, ok: false, conns: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			srv.dropFirst = tt.dropFirst
			srv.dropStat.Store(tt.dropStat)
			srv.put(t, dayPath, []byte("id,amount\n"))
			srv.start(t)
			waits := &retrytest.Waits{}
			_, err := source(t, srv, waits, nil).Offer(t.Context(), day(t))
			if (err == nil) != tt.ok {
				t.Fatalf("Offer: got %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "gave up after 3 attempts") {
				t.Errorf("Offer: got %v, want it to give up after 3 attempts", err)
			}
			if got := srv.conns.Load(); got != tt.conns || len(waits.All()) != int(tt.conns)-1 {
				t.Errorf("got %d connections and %d waits, want %d and %d", got, len(waits.All()), tt.conns, tt.conns-1)
			}
			srv.closed(t)
		})
	}
}

// TestTimeout shows a server that accepts and never speaks is given up
// on after Timeout, and tried again.
func TestTimeout(t *testing.T) {
	srv := newServer(t)
	srv.hang = true
	srv.start(t)
	waits := &retrytest.Waits{}
	src := source(t, srv, waits, func(c *sftp.Config) {
		c.Timeout = 100 * time.Millisecond
		c.Retry.Attempts = 2
	})
	start := time.Now()
	_, err := src.Offer(t.Context(), day(t))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Offer: got %v, want a timeout", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Offer took %s, want about 2×100ms", took)
	}
	if got := srv.conns.Load(); got != 2 {
		t.Errorf("connections: got %d, want 2", got)
	}
	srv.closed(t)
}

func TestContextCancelledMidDial(t *testing.T) {
	srv := newServer(t)
	srv.hang = true
	srv.start(t)
	waits := &retrytest.Waits{}
	src := source(t, srv, waits, func(c *sftp.Config) { c.Timeout = time.Minute })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-srv.accepted // the client is in the handshake
		cancel()
	}()
	start := time.Now()
	_, err := src.Offer(ctx, day(t))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Offer: got %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Offer took %s after the cancel, want it to stop at once", took)
	}
	if got := srv.conns.Load(); got != 1 || len(waits.All()) != 0 {
		t.Errorf("got %d connections and %d waits, want 1 and none", got, len(waits.All()))
	}
	srv.closed(t)
}

// TestCancelDownload shows the end of Open's context stops a download
// under way and releases the connection.
func TestCancelDownload(t *testing.T) {
	srv := newServer(t)
	srv.put(t, dayPath, bytes.Repeat([]byte("0123456789"), 1<<20))
	srv.start(t)
	src := source(t, srv, &retrytest.Waits{}, nil)
	offer, err := src.Offer(t.Context(), day(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	body, err := offer.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	if _, err := io.ReadFull(body, make([]byte, 1000)); err != nil {
		t.Fatalf("first read: %v", err)
	}
	cancel()
	n, err := io.Copy(io.Discard, body)
	if err == nil || n+1000 >= offer.Size {
		t.Errorf("read after cancel: got %d more bytes and %v, want the download cut short with an error", n, err)
	}
	body.Close()
	srv.closed(t)
}

func TestNew(t *testing.T) {
	good := sftp.Config{Addr: "sftp.bank.example", User: "recon", Signer: signer(t, userKey()),
		KnownHosts: "/etc/reconcile/known_hosts", RemotePath: template}
	tests := []struct {
		name string
		edit func(*sftp.Config)
		want string // "" accepted
	}{
		{"good", func(*sftp.Config) {}, ""},
		{"host and port", func(c *sftp.Config) { c.Addr = "sftp.bank.example:2222" }, ""},
		{"IPv6", func(c *sftp.Config) { c.Addr = "::1" }, ""},
		{"IPv6 and port", func(c *sftp.Config) { c.Addr = "[::1]:2222" }, ""},
		{"yyyymmdd only", func(c *sftp.Config) { c.RemotePath = "/out/STL{yyyymmdd}.txt" }, ""},
		{"no address", func(c *sftp.Config) { c.Addr = "" }, "Addr: empty"},
		{"a URL", func(c *sftp.Config) { c.Addr = "sftp://sftp.bank.example" }, "not a URL"},
		{"bad port", func(c *sftp.Config) { c.Addr = "sftp.bank.example:ssh" }, "port"},
		{"port out of range", func(c *sftp.Config) { c.Addr = "sftp.bank.example:70000" }, "port"},
		{"no user", func(c *sftp.Config) { c.User = "" }, "User is empty"},
		{"user with newline", func(c *sftp.Config) { c.User = "recon\nroot" }, "control characters"},
		{"no key", func(c *sftp.Config) { c.Signer = nil }, "Signer is nil"},
		{"no known_hosts", func(c *sftp.Config) { c.KnownHosts = "" }, "KnownHosts is empty"},
		{"no date in path", func(c *sftp.Config) { c.RemotePath = "/out/settlement.csv" }, "neither {date} nor {yyyymmdd}"},
		{"NUL in path", func(c *sftp.Config) { c.RemotePath = "/out/{date}\x00.csv" }, "control character"},
		{"newline in path", func(c *sftp.Config) { c.RemotePath = "/out/{date}\n.csv" }, "control character"},
		{"unknown placeholder", func(c *sftp.Config) { c.RemotePath = "/out/{yyyy}/{date}.csv" }, "not {date} or {yyyymmdd}"},
		{"negative timeout", func(c *sftp.Config) { c.Timeout = -time.Second }, "negative"},
		{"negative settle", func(c *sftp.Config) { c.Settle = -time.Second }, "Settle -1s is negative"},
		{"done marker", func(c *sftp.Config) { c.DoneMarker = "/out/STL{yyyymmdd}.done" }, ""},
		{"undated done marker", func(c *sftp.Config) { c.DoneMarker = "/out/READY" }, "DoneMarker \"/out/READY\": has neither {date} nor {yyyymmdd}"},
		{"done marker is the file", func(c *sftp.Config) { c.DoneMarker = template }, "DoneMarker is RemotePath"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good
			tt.edit(&cfg)
			_, err := sftp.New(cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("New: got %v, want it accepted", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("New: got %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestSettleLongerThanTimeout: the wait between the two looks, with the
// real timer, may be longer than the connection's setup timeout: the
// connection is not cut under it.
func TestSettleLongerThanTimeout(t *testing.T) {
	srv := newServer(t)
	srv.put(t, dayPath, []byte("id,amount\n1,100\n"))
	srv.start(t)
	src := source(t, srv, &retrytest.Waits{}, func(c *sftp.Config) {
		c.Timeout, c.Settle, c.Sleep = 300*time.Millisecond, 600*time.Millisecond, nil
	})
	start := time.Now()
	if _, err := src.Offer(t.Context(), day(t)); err != nil {
		t.Fatalf("Offer: %v", err)
	}
	if took := time.Since(start); took < 600*time.Millisecond {
		t.Errorf("Offer took %s, want the looks 600ms apart", took)
	}
	if got := srv.conns.Load(); got != 1 {
		t.Errorf("connections: got %d, want 1 (both looks on one)", got)
	}
	srv.closed(t)
}

func TestRemotePath(t *testing.T) {
	tests := []struct{ tmpl, want string }{
		{"outgoing/{date}/settle_{yyyymmdd}.csv", "outgoing/2026-11-28/settle_20261128.csv"},
		{"/STL{yyyymmdd}{yyyymmdd}", "/STL2026112820261128"},
	}
	for _, tt := range tests {
		if got := sftp.RemotePath(tt.tmpl, day(t)); got != tt.want {
			t.Errorf("RemotePath(%q): got %q, want %q", tt.tmpl, got, tt.want)
		}
	}
}

// TestUploadInProgress: a file is complete when it is the same at two
// looks Settle apart (size and modification time), or, when the bank
// writes one, when its done marker is there; a file still being written,
// or changed after the looks, is not ready, and nothing is saved.
func TestUploadInProgress(t *testing.T) {
	half := []byte("id,amount\n1,100\n")
	whole := []byte("id,amount\n1,100\n2,250\n3,990\n")
	const settle = 20 * time.Second
	tests := []struct {
		name   string
		marker string // Config.DoneMarker
		setup  func(t *testing.T, srv *server)
		during func(t *testing.T, srv *server) // the bank, while the job waits between the looks
		after  func(t *testing.T, srv *server) // the bank, after the looks and before the download
		ready  bool
		says   string // in the error, when set
		waits  int    // waits of Settle between the looks
	}{
		{name: "the same at both looks", setup: func(t *testing.T, srv *server) { srv.put(t, dayPath, whole) }, ready: true, waits: 1},
		{name: "grows between the looks (an upload pausing between rows)",
			setup:  func(t *testing.T, srv *server) { srv.put(t, dayPath, half) },
			during: func(t *testing.T, srv *server) { srv.put(t, dayPath, whole) }, waits: 1},
		{name: "rewritten to the same size between the looks",
			setup: func(t *testing.T, srv *server) { srv.put(t, dayPath, whole) },
			during: func(t *testing.T, srv *server) {
				srv.put(t, dayPath, bytes.ToUpper(whole))
				srv.touch(t, dayPath, time.Now().Add(time.Minute))
			}, waits: 1},
		{name: "grows after the looks, before the download",
			setup: func(t *testing.T, srv *server) { srv.put(t, dayPath, half) },
			after: func(t *testing.T, srv *server) { srv.put(t, dayPath, whole) }, says: "changed since it was looked at", waits: 1},
		{name: "grows during the download",
			setup: func(t *testing.T, srv *server) {
				srv.put(t, dayPath, half)
				srv.firstRead = func() { srv.put(t, dayPath, whole) }
			}, says: "changed while it was downloaded", waits: 1},
		{name: "done marker there: no wait", marker: "outgoing/{date}/settle_{yyyymmdd}.done",
			setup: func(t *testing.T, srv *server) {
				srv.put(t, dayPath, whole)
				srv.put(t, "outgoing/2026-11-28/settle_20261128.done", nil)
			}, ready: true},
		{name: "done marker not there yet", marker: "outgoing/{date}/settle_{yyyymmdd}.done",
			setup: func(t *testing.T, srv *server) {
				srv.put(t, dayPath, half)
				srv.put(t, "outgoing/2026-11-27/settle_20261127.done", nil)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			tt.setup(t, srv)
			srv.start(t)
			var waited []time.Duration
			src := source(t, srv, &retrytest.Waits{}, func(c *sftp.Config) {
				c.Settle, c.DoneMarker = settle, tt.marker
				c.Sleep = func(ctx context.Context, d time.Duration) error {
					waited = append(waited, d)
					if tt.during != nil {
						tt.during(t, srv)
					}
					return nil
				}
			})
			dest := filepath.Join(t.TempDir(), "settle.csv")
			offer, err := src.Offer(t.Context(), day(t))
			if err == nil {
				if tt.after != nil {
					tt.after(t, srv)
				}
				_, err = fetch.Save(t.Context(), offer, dest, 0, nil)
			}
			got, _ := os.ReadFile(dest)
			switch {
			case tt.ready && (err != nil || !bytes.Equal(got, whole)):
				t.Errorf("got %v and %q saved, want the whole file", err, got)
			case !tt.ready && (!errors.Is(err, fetch.ErrNotReady) || got != nil):
				t.Errorf("got %v and %q saved, want not ready and nothing saved", err, got)
			case tt.says != "" && !strings.Contains(err.Error(), tt.says):
				t.Errorf("got %v, want it to say %q", err, tt.says)
			}
			if len(waited) != tt.waits || tt.waits > 0 && waited[0] != settle {
				t.Errorf("waits between the looks: %v, want %d of %s", waited, tt.waits, settle)
			}
			srv.closed(t)
		})
	}
}
