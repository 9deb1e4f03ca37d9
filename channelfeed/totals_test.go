package channelfeed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reconcile"
)

// TestFileTotals: a file whose amounts and fees in one currency add up
// past reconcile.MaxFileTotal is refused at the row that takes them past
// it, whatever its format: every sum the night makes of its rows (money
// at risk, a category's total, an order's refunds) must hold in an int64,
// and three rows of one currency once summed to 10.00 of money at risk.
// Each currency counts on its own.
func TestFileTotals(t *testing.T) {
	const header = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status\n"
	// 2×10^18 minor units a row: one is below the bound, two are past it.
	const big = "20000000000000000.00"
	row := func(n, amount, currency, fee string) string {
		return "payment,ORD" + n + ",,TXN-" + n + "," + amount + "," + currency + ",2026-11-28T09:00:00+08:00," + fee + ",SUCCESS\n"
	}
	parse := func(t *testing.T, body string) (FileInfo, error) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "bill.csv")
		if err := os.WriteFile(path, []byte(header+body), 0o600); err != nil {
			t.Fatal(err)
		}
		return ParseFile(t.Context(), path, "csv", Options{Location: shanghai}, nil)
	}

	// The largest fee a row can carry: 9223372036854775 minor units and
	// a fraction, about 250 of them to pass the bound.
	const maxFee = "92233720368547.75807"
	feeRows := int(reconcile.MaxFileTotal/(100+9223372036854775+1)) + 1

	info, err := parse(t, row("1", big, "CNY", "")+row("2", big, "USD", "")+row("3", "1.00", "CNY", ""))
	if err != nil || info.Rows != 3 {
		t.Fatalf("one large row in each of two currencies: %+v, %v; want 3 rows", info, err)
	}
	for _, tt := range []struct {
		name, body string
		line       int
	}{
		{"two large amounts", row("1", big, "CNY", "") + row("2", "1.00", "USD", "") + row("3", big, "CNY", ""), 4},
		{"the largest amount an int64 holds", row("1", "92233720368547758.07", "CNY", "") + row("2", "92233720368547758.07", "CNY", "") +
			row("3", "10.02", "CNY", ""), 2},
		{"fees", strings.Repeat(row("1", "1.00", "USD", maxFee), feeRows), feeRows + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.body)
			var pe *reconcile.ParseError
			if !errors.As(err, &pe) || pe.Line != tt.line || !errors.Is(err, reconcile.ErrAmountRange) ||
				!strings.Contains(err.Error(), "add up past") {
				t.Fatalf("err = %v, want line %d refused: the amounts add up past the bound", err, tt.line)
			}
		})
	}
}
