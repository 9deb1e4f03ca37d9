// Package tempdb starts a throwaway PostgreSQL server in a temporary
// directory, for tests and the demo. The server listens on a Unix socket
// only, so several can run side by side without fighting over a TCP port.
package tempdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNoBinaries is returned when no PostgreSQL server binaries are found.
var ErrNoBinaries = errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in /usr/lib/postgresql/*/bin: " +
	"install them (apt-get install postgresql) or set RECONCILE_DATABASE_URL to an existing server")

// Port is the port every server claims. Only the socket file name depends on
// it: each server has its own socket directory and no TCP listener.
const Port = 5432

// maxSocketPath is the size of sun_path on Linux, less its terminating NUL.
const maxSocketPath = 107

// Options configure Start.
type Options struct {
	// Dir holds the data directory, the socket and the server log. Empty
	// means a fresh directory from os.MkdirTemp. Stop removes it either way.
	Dir string
	// Fsync keeps fsync on. Tests leave it off: a throwaway server need not
	// survive a power cut, and fsync dominates the cost of CREATE DATABASE.
	Fsync bool
	// Log receives the output of initdb and pg_ctl, and the server log when
	// the server stops. Nil discards it.
	Log io.Writer
}

// Server is a running throwaway PostgreSQL server.
type Server struct {
	dir     string
	dataDir string
	sockDir string
	logFile string
	binDir  string
	cred    *syscall.Credential
	log     io.Writer
}

// debianGlob is where Debian and Ubuntu install each major version.
var debianGlob = "/usr/lib/postgresql/*/bin"

// FindBinaries returns the directory holding initdb and pg_ctl: the one on
// PATH, else the newest /usr/lib/postgresql/*/bin (Debian does not put the
// server binaries on PATH).
func FindBinaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		// Resolve symlinks so pg_ctl and postgres are looked for next to the
		// real initdb, not next to a link in /usr/local/bin.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if isExecutable(filepath.Join(dir, "pg_ctl")) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob(debianGlob)
	// Newest first: compare major versions as numbers so 9.6 sorts below 15.
	sort.Slice(dirs, func(i, j int) bool {
		return versionOf(dirs[i]) > versionOf(dirs[j])
	})
	for _, dir := range dirs {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "pg_ctl")) {
			return dir, nil
		}
	}
	return "", ErrNoBinaries
}

// versionOf reads the version directory of a Debian layout as a number
// that orders versions: "15" is 15000, "9.6" is 9006.
func versionOf(binDir string) int {
	major, minor, _ := strings.Cut(filepath.Base(filepath.Dir(binDir)), ".")
	a, _ := strconv.Atoi(major)
	b, _ := strconv.Atoi(minor)
	return a*1000 + b
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Start initialises a cluster and starts a server on it, returning once it
// accepts connections. When running as root it runs PostgreSQL as the
// postgres OS user, since the server refuses to run as root.
func Start(ctx context.Context, opts Options) (_ *Server, err error) {
	binDir, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	s := &Server{binDir: binDir, log: opts.Log}
	if s.log == nil {
		s.log = io.Discard
	}
	if opts.Dir == "" {
		if s.dir, err = os.MkdirTemp("", "reconcile-pg-"); err != nil {
			return nil, fmt.Errorf("tempdb: %w", err)
		}
	} else {
		if s.dir, err = filepath.Abs(opts.Dir); err != nil {
			return nil, fmt.Errorf("tempdb: %w", err)
		}
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, fmt.Errorf("tempdb: %w", err)
		}
	}
	defer func() {
		if err != nil {
			os.RemoveAll(s.dir)
		}
	}()
	s.dataDir = filepath.Join(s.dir, "data")
	s.sockDir = filepath.Join(s.dir, "sock")
	s.logFile = filepath.Join(s.dir, "postgres.log")
	if n := len(s.socketPath()); n > maxSocketPath {
		return nil, fmt.Errorf("tempdb: socket path %s is %d bytes, longer than the %d a Unix socket allows: use a shorter Dir or TMPDIR",
			s.socketPath(), n, maxSocketPath)
	}
	for _, d := range []string{s.dataDir, s.sockDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("tempdb: %w", err)
		}
	}
	if os.Geteuid() == 0 {
		if err := s.dropRoot(); err != nil {
			return nil, err
		}
	}

	if err := s.run(ctx, "initdb", "-D", s.dataDir, "-A", "trust", "-U", "postgres",
		"--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return nil, err
	}
	fsync := "off"
	if opts.Fsync {
		fsync = "on"
	}
	// Settings go into postgresql.conf rather than pg_ctl -o, which would
	// need shell quoting for listen_addresses='' and odd directory names.
	conf := fmt.Sprintf(`
listen_addresses = ''
unix_socket_directories = '%s'
port = %d
fsync = %s
synchronous_commit = %s
full_page_writes = %s
`, strings.ReplaceAll(s.sockDir, "'", "''"), Port, fsync, fsync, fsync)
	if err := appendFile(filepath.Join(s.dataDir, "postgresql.conf"), conf); err != nil {
		return nil, fmt.Errorf("tempdb: %w", err)
	}
	if err := s.run(ctx, "pg_ctl", "-D", s.dataDir, "-l", s.logFile, "-w", "-t", "60", "start"); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, tail(s.logFile, 20))
	}
	return s, nil
}

// dropRoot makes the directories the postgres user's and sets the
// credential the PostgreSQL processes run with.
func (s *Server) dropRoot() error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("tempdb: running as root needs a postgres OS user to run the server as: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return fmt.Errorf("tempdb: uid of postgres: %w", err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return fmt.Errorf("tempdb: gid of postgres: %w", err)
	}
	for _, d := range []string{s.dir, s.dataDir, s.sockDir} {
		if err := os.Chown(d, int(uid), int(gid)); err != nil {
			return fmt.Errorf("tempdb: %w", err)
		}
	}
	// The postgres user must be able to reach its directory through every
	// parent; a 0700 TMPDIR owned by root would stop initdb with a puzzling
	// permission error, so say so now.
	for p := filepath.Dir(s.dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("tempdb: %w", err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("tempdb: %s is not traversable by others, so the postgres user cannot reach %s: use another Dir or TMPDIR", p, s.dir)
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return nil
}

func (s *Server) socketPath() string {
	return filepath.Join(s.sockDir, fmt.Sprintf(".s.PGSQL.%d", Port))
}

// run runs one of the PostgreSQL programs and returns its output in the
// error when it fails.
func (s *Server) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.binDir, name), args...)
	cmd.Dir = s.dir
	cmd.Env = serverEnv()
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, s.log)
	cmd.Stderr = cmd.Stdout
	// pg_ctl start leaves the postmaster running; should it keep our output
	// pipe open, Wait must not hang on it.
	cmd.WaitDelay = 5 * time.Second
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("tempdb: %s %s: %w\n%s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// serverEnv is the environment without PG* variables, which would otherwise
// point initdb and pg_ctl at some other cluster.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return append(env, "LC_ALL=C")
}

// DSN returns a key/value connection string for dbname on the server, in
// the form "host=/tmp/reconcile-pg-123/sock port=5432 user=postgres
// dbname=NAME sslmode=disable".
func (s *Server) DSN(dbname string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable",
		quoteValue(s.sockDir), Port, quoteValue(dbname))
}

// Dir is the directory the server lives in.
func (s *Server) Dir() string { return s.dir }

// quoteValue quotes a key/value connection string value when it needs it.
func quoteValue(v string) string {
	if v != "" && !strings.ContainsAny(v, ` '\`) {
		return v
	}
	v = strings.ReplaceAll(v, `\`, `\\`)
	v = strings.ReplaceAll(v, `'`, `\'`)
	return "'" + v + "'"
}

// Halt stops the server but keeps its data, as an outage would; Resume
// starts it again. Tests use them to take the database away mid-run.
func (s *Server) Halt() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return s.run(ctx, "pg_ctl", "-D", s.dataDir, "-m", "fast", "-w", "stop")
}

// Resume starts a halted server again and waits until it accepts
// connections.
func (s *Server) Resume() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return s.run(ctx, "pg_ctl", "-D", s.dataDir, "-l", s.logFile, "-w", "-t", "60", "start")
}

// Stop stops the server without waiting for clients, then removes its
// directory. The data is throwaway, so there is nothing to flush.
func (s *Server) Stop() error {
	// A context of its own: Stop runs at the end of tests whose context
	// may already be cancelled, and must still stop the server.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stopErr := s.run(ctx, "pg_ctl", "-D", s.dataDir, "-m", "immediate", "-w", "stop")
	if s.log != io.Discard {
		if f, err := os.Open(s.logFile); err == nil {
			io.Copy(s.log, f)
			f.Close()
		}
	}
	if err := os.RemoveAll(s.dir); err != nil && stopErr == nil {
		stopErr = fmt.Errorf("tempdb: %w", err)
	}
	return stopErr
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// tail returns the last n lines of a file, for errors about a server that
// would not start.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
