package reports

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReportsAsideLetsASignalThrough: a run told to stop while its reports
// are still being made stops at once; the reports' temporary files are
// removed when they are done.
func TestReportsAsideLetsASignalThrough(t *testing.T) {
	a := &Aside{done: make(chan made, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := a.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait: got %v, want the context's error", err)
	}
	returned := make(chan struct{})
	go func() { a.Close(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("close waited for reports still being made")
	}
	dir := t.TempDir()
	tmp := filepath.Join(dir, "reconcile-reports-1")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	a.done <- made{rep: &Rendered{dir: tmp}} // the reports, done late
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(tmp); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the late reports' temporary directory was not removed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
