package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/channelfeed"
)

// TestParseAside: every row reaches the index, in the file's order, across
// batches; a bad line stops the parse with its error, and nothing is added
// after parseAside returns.
func TestParseAside(t *testing.T) {
	const n = 3*parseBatch + 7
	var b strings.Builder
	b.WriteString("type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "payment,O%05d,,T%05d,1.00,CNY,2026-11-28T10:00:00Z\n", i, i)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	if err := os.WriteFile(good, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := channelfeed.Options{Location: time.UTC}
	var got []string
	info, err := parseAside(context.Background(), good, "csv", opts, func(tx reconcile.Transaction) {
		got = append(got, tx.OrderNo)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || info.SHA256 == "" {
		t.Fatalf("got %d rows (file hash %q), want %d and a hash", len(got), info.SHA256, n)
	}
	for i, o := range got {
		if want := fmt.Sprintf("O%05d", i); o != want {
			t.Fatalf("row %d: got %s, want %s: out of order", i, o, want)
		}
	}

	bad := filepath.Join(dir, "bad.csv")
	lines := strings.SplitAfter(b.String(), "\n")
	lines[parseBatch+5] = "payment,OBAD,,TBAD,1.0x,CNY,2026-11-28T10:00:00Z\n"
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	added, done := 0, false
	_, err = parseAside(context.Background(), bad, "csv", opts, func(reconcile.Transaction) {
		if done {
			t.Error("a row was added after parseAside returned")
		}
		added++
	})
	done = true
	var pe *reconcile.ParseError
	if !errors.As(err, &pe) || pe.Line != parseBatch+6 {
		t.Fatalf("bad line: got %v, want a parse error on line %d", err, parseBatch+6)
	}
	if added > parseBatch+4 {
		t.Errorf("%d rows added before the bad line %d", added, parseBatch+6)
	}
}
