//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWithin runs the CLI and fails the test if it has not returned within
// d: the commands below used to block for good.
func runWithin(t *testing.T, c *cli, d time.Duration, args ...string) int {
	t.Helper()
	done := make(chan int, 1)
	go func() { done <- c.app.Main(t.Context(), args) }()
	select {
	case code := <-done:
		return code
	case <-time.After(d):
		t.Fatalf("reconcile %s did not return within %s", strings.Join(args, " "), d)
		return 0
	}
}

// TestNamedPipesAreNotWaitedOn: a settlement file or a config that is a
// named pipe is refused at once by check-config and run. check-config used
// to open the settlement file before looking at what it was, and block.
func TestNamedPipesAreNotWaitedOn(t *testing.T) {
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(inbox, "20261128.csv"), filepath.Join(dir, "pipe.json")} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatalf("mkfifo: %v", err)
		}
	}
	raw, _ := json.Marshal(map[string]any{
		"out_dir":  filepath.Join(dir, "out"),
		"schedule": map[string]any{"lookback_days": 3},
		"channels": []map[string]any{{"name": "shop", "format": "csv", "path": filepath.Join(inbox, "{yyyymmdd}.csv")}},
	})
	cfg := filepath.Join(dir, "reconcile.json")
	if err := os.WriteFile(cfg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(nil)
	c.app.Now = func() time.Time { return time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC) }
	if code := runWithin(t, c, 10*time.Second, "check-config", "--config", cfg); code != ExitFailed {
		t.Errorf("check-config: exit %d, want %d", code, ExitFailed)
	}
	if probs := strings.Join(problemLines(c.out.String()), "\n"); !strings.Contains(probs, "20261128.csv is a named pipe, not a regular file") {
		t.Errorf("check-config problems do not name the pipe:\n%s", c.out)
	}

	pipe := filepath.Join(dir, "pipe.json")
	if code := runWithin(t, c, 10*time.Second, "check-config", "--config", pipe); code != ExitFailed ||
		!strings.Contains(c.out.String(), "is a named pipe") {
		t.Errorf("check-config of a pipe: exit %d\n%s", code, c.out)
	}
	if code := runWithin(t, c, 10*time.Second, "run", "--date", "2026-11-28", "--config", pipe); code != ExitUsage ||
		!strings.Contains(c.errb.String(), "config "+pipe+" is a named pipe") {
		t.Errorf("run with a pipe for a config: exit %d\n%s", code, c.errb)
	}
	if code := runWithin(t, c, 10*time.Second, "review", "import", pipe, "--dsn", "postgres://127.0.0.1:1/x"); code != ExitFailed ||
		!strings.Contains(c.errb.String(), "workbook "+pipe+" is a named pipe") {
		t.Errorf("review import of a pipe: exit %d\n%s", code, c.errb)
	}
}
