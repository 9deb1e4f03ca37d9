package nightly

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/config"
)

// TestStatementDownloadLook: a bank statement dropped on SFTP is read by
// its statement reader before it is put in place, as its night will read
// it: a whole one passes, a truncated one is refused naming the file.
func TestStatementDownloadLook(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "bankfeed", "testdata", "camt053", "v02-two-accounts", "input.xml"))
	if err != nil {
		t.Fatal(err)
	}
	ch := config.Channel{Name: "bank", Format: "camt053", Account: config.Accounts{"DE89370400440532013000"}}
	day, _ := reconcile.NewBusinessDay("2026-03-02", time.UTC)
	look := parserLook(t.Context(), ch, day, "camt053_20260302.xml")
	dir := t.TempDir()
	whole, cut := filepath.Join(dir, "whole"), filepath.Join(dir, "cut")
	if err := os.WriteFile(whole, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, raw[:len(raw)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := look(whole); err != nil {
		t.Errorf("a whole statement: %v", err)
	}
	if err := look(cut); err == nil || !strings.Contains(err.Error(), "camt053_20260302.xml") {
		t.Errorf("a truncated statement: %v", err)
	}
}
