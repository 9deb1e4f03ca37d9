package bankfeed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reconcile"
)

// TestStatementTotals: a statement file whose entries in one currency
// add up past reconcile.MaxFileTotal is refused at the entry that takes
// them past it, though its balances agree: a payout's arrivals are summed
// across nights, and a sum past an int64 would show as another amount.
func TestStatementTotals(t *testing.T) {
	// 2×10^18 cents an entry: one is below the bound, two are past it.
	const big = "20000000000000000,00"
	doc := func(entries int) string {
		lines := []string{":20:STMT1", ":25:NL69INGB0123456789", ":28C:1/1", ":60F:C260310EUR0,00"}
		for range entries {
			lines = append(lines, ":61:2603100310C"+big+"NTRFNONREF//B1", ":86:/REMI/payout po_1/")
		}
		closing := map[int]string{1: big, 2: "40000000000000000,00"}[entries]
		return mtDoc(append(lines, ":62F:C260310EUR"+closing)...)
	}
	readFile := func(t *testing.T, data string) ([]reconcile.BankStatement, error) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "statement.sta")
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		stmts, _, err := ReadFile(path, "mt940", Options{}, nil)
		return stmts, err
	}
	if stmts, err := readFile(t, doc(1)); err != nil || len(stmts) != 1 {
		t.Fatalf("one large entry: %+v, %v", stmts, err)
	}
	_, err := readFile(t, doc(2))
	var pe *reconcile.ParseError
	if !errors.As(err, &pe) || pe.Line != 7 || !errors.Is(err, reconcile.ErrAmountRange) || !strings.Contains(err.Error(), "add up past") {
		t.Fatalf("two large entries: err = %v, want the second (line 7) refused", err)
	}
}
