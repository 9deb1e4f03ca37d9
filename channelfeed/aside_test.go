package channelfeed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
)

// TestParseFileAside: every row reaches add, in the file's order, across
// batches; a bad line stops the parse with its error, and nothing is added
// after ParseFileAside returns.
func TestParseFileAside(t *testing.T) {
	const n = 3*asideBatch + 7
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
	opts := Options{Location: time.UTC}
	var got []string
	info, err := ParseFileAside(t.Context(), good, "csv", opts, func(tx reconcile.Transaction) {
		got = append(got, tx.OrderNo)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || info.SHA256 == "" || info.Rows != n {
		t.Fatalf("got %d rows (file hash %q, %d rows counted), want %d and a hash", len(got), info.SHA256, info.Rows, n)
	}
	for i, o := range got {
		if want := fmt.Sprintf("O%05d", i); o != want {
			t.Fatalf("row %d: got %s, want %s: out of order", i, o, want)
		}
	}

	bad := filepath.Join(dir, "bad.csv")
	lines := strings.SplitAfter(b.String(), "\n")
	lines[asideBatch+5] = "payment,OBAD,,TBAD,1.0x,CNY,2026-11-28T10:00:00Z\n"
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	added, done := 0, false
	_, err = ParseFileAside(t.Context(), bad, "csv", opts, func(reconcile.Transaction) {
		if done {
			t.Error("a row was added after ParseFileAside returned")
		}
		added++
	})
	done = true
	var pe *reconcile.ParseError
	if !errors.As(err, &pe) || pe.Line != asideBatch+6 {
		t.Fatalf("bad line: got %v, want a parse error on line %d", err, asideBatch+6)
	}
	if added > asideBatch+4 {
		t.Errorf("%d rows added before the bad line %d", added, asideBatch+6)
	}
}
