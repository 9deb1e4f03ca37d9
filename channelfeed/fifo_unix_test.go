//go:build unix

package channelfeed

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestParseFileFIFO checks that a named pipe is refused rather than
// opened: opening it would block until a writer appears.
func TestParseFileFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bill.csv")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := ParseFile(t.Context(), path, "wechatpay", Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("ParseFile(fifo) = %v, want an error naming %s as a named pipe", err, path)
	}
}
