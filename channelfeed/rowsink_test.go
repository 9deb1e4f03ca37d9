package channelfeed

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reconcile"
)

// TestReversalAboveChargebacks: a chargeback reversal is held to the
// chargebacks of its dispute, in its currency, that come before it in
// the file; what the file does not show is not held against it.
func TestReversalAboveChargebacks(t *testing.T) {
	// row is a row of dh of type typ, amount, currency and dispute id.
	row := func(typ, amount, currency, id string) string {
		return typ + ",ORD1,,CB1," + amount + "," + currency + ",2026-11-28T18:00:00+08:00,,," + id + ",TX1,\n"
	}
	tests := []struct {
		name  string
		input string
		line  int // of the error, 0 for none
	}{
		{"as large", row("chargeback", "50.00", "CNY", "D1") + row("chargeback_reversal", "50.00", "CNY", "D1"), 0},
		{"larger", row("chargeback", "50.00", "CNY", "D1") + row("chargeback_reversal", "50.01", "CNY", "D1"), 3},
		{"larger than the first of two", row("chargeback", "50.00", "CNY", "D1") + row("chargeback", "10.00", "CNY", "D1") + row("chargeback_reversal", "60.00", "CNY", "D1"), 0},
		{"a second chargeback counts", row("chargeback", "50.00", "CNY", "D1") + row("second_chargeback", "50.00", "CNY", "D1") + row("chargeback_reversal", "100.00", "CNY", "D1"), 0},
		{"each reversal on its own", row("chargeback", "50.00", "CNY", "D1") + row("chargeback_reversal", "50.00", "CNY", "D1") + row("chargeback_reversal", "50.00", "CNY", "D1"), 0},
		{"before its chargeback", row("chargeback_reversal", "90.00", "CNY", "D1") + row("chargeback", "50.00", "CNY", "D1"), 0},
		{"chargeback of an earlier file", row("chargeback_reversal", "90.00", "CNY", "D2"), 0},
		{"another dispute", row("chargeback", "50.00", "CNY", "D1") + row("chargeback_reversal", "90.00", "CNY", "D2"), 0},
		{"another currency", row("chargeback", "50.00", "CNY", "D1") + row("chargeback_reversal", "90.00", "USD", "D1"), 0},
		{"larger in the same of two currencies", row("chargeback", "50.00", "USD", "D1") + row("chargeback", "90.00", "CNY", "D1") + row("chargeback_reversal", "60.00", "USD", "D1"), 4},
	}
	p, _ := Lookup("csv")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Parse(t.Context(), strings.NewReader(dh+tt.input), Options{Name: "bill.csv", Location: shanghai}, nil)
			switch {
			case tt.line == 0 && err != nil:
				t.Errorf("err = %v, want none", err)
			case tt.line > 0 && (err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("bill.csv:%d: column amount: chargeback reversal of", tt.line))):
				t.Errorf("err = %v, want the reversal of line %d refused", err, tt.line)
			}
		})
	}
}

// TestReversalCheckKeepsItsKeys: a chargeback's dispute id outlives the
// text of its row, which ParseFileAside fills with later rows'.
func TestReversalCheckKeepsItsKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(dh)
	b.WriteString("chargeback,ORD1,,CB1,50.00,CNY,2026-11-28T18:00:00+08:00,,,DSP1,TX1,\n")
	for i := range 4 * asideBatch {
		fmt.Fprintf(&b, "payment,ORD%d,,TX%d,1.00,CNY,2026-11-28T18:00:00+08:00,,,,,\n", i, i)
	}
	b.WriteString("chargeback_reversal,ORD1,,CBR1,50.01,CNY,2026-11-28T19:00:00+08:00,,,DSP1,TX1,\n")
	path := filepath.Join(t.TempDir(), "bill.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFileAside(t.Context(), path, "csv", Options{Name: "bill.csv"}, func(reconcile.Transaction) {})
	want := fmt.Sprintf("bill.csv:%d: column amount: chargeback reversal of 50.01", 4*asideBatch+3)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v, want %s…", err, want)
	}
}
