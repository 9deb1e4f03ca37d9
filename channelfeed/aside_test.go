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
// batches, its text intact while add has it and a clone of it intact
// after, though the text is lent from slabs filled again; a bad line
// stops the parse with its error, and nothing is added after
// ParseFileAside returns.
func TestParseFileAside(t *testing.T) {
	const n = 20*asideBatch + 7
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
	var kept []reconcile.Transaction
	var lent []string // the text as lent, not copied
	info, err := ParseFileAside(t.Context(), good, "csv", opts, func(tx reconcile.Transaction) {
		i := len(kept)
		if tx.OrderNo != fmt.Sprintf("O%05d", i) || tx.ChannelTxnID != fmt.Sprintf("T%05d", i) || tx.Currency != "CNY" {
			t.Fatalf("row %d as added: %s %s %s, want O%05d T%05d CNY", i, tx.OrderNo, tx.ChannelTxnID, tx.Currency, i, i)
		}
		kept, lent = append(kept, tx.Clone()), append(lent, tx.OrderNo)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != n || info.SHA256 == "" || info.Rows != n {
		t.Fatalf("got %d rows (file hash %q, %d rows counted), want %d and a hash", len(kept), info.SHA256, info.Rows, n)
	}
	for i, tx := range kept {
		if want := fmt.Sprintf("O%05d", i); tx.OrderNo != want || tx.ChannelTxnID != fmt.Sprintf("T%05d", i) {
			t.Fatalf("row %d kept: got %s %s, want %s: out of order or overwritten", i, tx.OrderNo, tx.ChannelTxnID, want)
		}
	}
	// The slabs were filled again: text kept without a copy changed.
	if overwritten := countChanged(lent, kept); overwritten == 0 {
		t.Errorf("all %d lent order numbers still read as they did: the rows' text was not lent from reused slabs", n)
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

func countChanged(lent []string, kept []reconcile.Transaction) int {
	n := 0
	for i := range lent {
		if lent[i] != kept[i].OrderNo {
			n++
		}
	}
	return n
}

// TestParseFileAsideLends: for each format whose rows lend their text,
// ParseFileAside gives add the rows ParseFile reads, field for field,
// while the slabs under them are filled again.
func TestParseFileAsideLends(t *testing.T) {
	for _, tt := range []struct {
		format string
		data   []byte
	}{
		{"csv", genCSV(30000)},
		{"wechatpay", genWeChatPay(30000)},
	} {
		t.Run(tt.format, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bill.csv")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			opts := Options{Location: shanghai}
			var want []reconcile.Transaction
			if _, err := ParseFile(t.Context(), path, tt.format, opts, func(tx reconcile.Transaction) error {
				want = append(want, tx)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var lent []string
			i := 0
			if _, err := ParseFileAside(t.Context(), path, tt.format, opts, func(tx reconcile.Transaction) {
				if i >= len(want) || tx != want[i] {
					t.Fatalf("row %d as added: got %+v, want %+v", i, tx, want[i])
				}
				lent = append(lent, tx.ChannelTxnID)
				i++
			}); err != nil {
				t.Fatal(err)
			}
			if i != len(want) {
				t.Fatalf("%d rows added, want %d", i, len(want))
			}
			changed := 0
			for k := range lent {
				if lent[k] != want[k].ChannelTxnID {
					changed++
				}
			}
			if changed == 0 {
				t.Errorf("no lent channel id changed after its batch: the text was not lent from reused slabs")
			}
		})
	}
}
