//go:build unix

package inputfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"reconcile/inputfile"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "bill.csv")
	if err := os.WriteFile(regular, []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"regular", regular, ""},
		{"link to a regular file", link, ""},
		{"named pipe", fifo, "is a named pipe, not a regular file"},
		{"directory", dir, "is a directory, not a regular file"},
		{"device", "/dev/null", "is a device, not a regular file"},
		{"loop", loop, "symbolic link loop"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				f, err := inputfile.Open(tt.path, "config")
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("Open(%s) blocked", tt.path)
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want it opened", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "config "+tt.path)):
				t.Errorf("got %v, want an error naming config %s with %q", err, tt.path, tt.want)
			}
		})
	}
}

func TestReadFileLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reconcile.json")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := inputfile.ReadFile(path, "config", 10); err != nil || string(b) != "0123456789" {
		t.Errorf("at the limit: got %q, %v", b, err)
	}
	if _, err := inputfile.ReadFile(path, "config", 9); err == nil || !strings.Contains(err.Error(), "more than the 9") {
		t.Errorf("past the limit: got %v, want refused", err)
	}
}
