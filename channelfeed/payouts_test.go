package channelfeed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
)

// payoutsOf parses a file and returns the payouts it tells of.
func payoutsOf(t *testing.T, format, path string) ([]reconcile.Payout, error) {
	t.Helper()
	var got []reconcile.Payout
	opts := Options{Location: shanghai, Payouts: func(p reconcile.Payout) error {
		got = append(got, p)
		return nil
	}}
	_, err := ParseFile(t.Context(), path, format, opts, nil)
	return got, err
}

// TestStripePayout: a payout report's rows are summed by their
// automatic payout, net of fees, expected on the payout's effective date.
func TestStripePayout(t *testing.T) {
	got, err := payoutsOf(t, "stripe", filepath.Join("testdata", "stripe", "sample", "input.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := reconcile.Payout{ID: "po_1FAKEpayout00000000001", Amount: 32430, Currency: "USD",
		ExpectedOn: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Rows: 14, Line: 2}
	if len(got) != 1 || got[0] != want {
		t.Errorf("payouts = %+v, want %+v", got, want)
	}
}

const stPayoutHeader = "automatic_payout_id,automatic_payout_effective_at,balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,payment_metadata[order_id]\n"

// TestStripePayouts: several payouts in one report, each its own sum;
// what no payout can be is refused where it is read.
func TestStripePayouts(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		path := filepath.Join(dir, "report.csv")
		if err := os.WriteFile(path, []byte(stPayoutHeader+body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	got, err := payoutsOf(t, "stripe", write(
		"po_A,2026-12-01 00:00:00,txn_1,2026-11-28 10:00:00,usd,100.00,3.20,96.80,charge,ch_1,ORD1\n"+
			"po_B,2026-12-02 00:00:00,txn_2,2026-11-28 11:00:00,usd,50.00,1.75,48.25,charge,ch_2,ORD2\n"+
			"po_A,2026-12-01 00:00:00,txn_3,2026-11-28 12:00:00,usd,-20.00,0.00,-20.00,refund,re_1,ORD1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "po_A" || got[0].Amount != 7680 || got[0].Rows != 2 ||
		got[1].ID != "po_B" || got[1].Amount != 4825 || !got[1].ExpectedOn.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("payouts = %+v", got)
	}

	for _, tt := range []struct {
		name, body string
		line       int
		says       string
	}{
		{"two currencies", "po_A,2026-12-01 00:00:00,txn_1,2026-11-28 10:00:00,usd,1.00,0.00,1.00,charge,ch_1,ORD1\n" +
			"po_A,2026-12-01 00:00:00,txn_2,2026-11-28 10:00:00,eur,1.00,0.00,1.00,charge,ch_2,ORD2\n", 3, "a payout is in one currency"},
		{"two dates", "po_A,2026-12-01 00:00:00,txn_1,2026-11-28 10:00:00,usd,1.00,0.00,1.00,charge,ch_1,ORD1\n" +
			"po_A,2026-12-03 00:00:00,txn_2,2026-11-28 10:00:00,usd,1.00,0.00,1.00,charge,ch_2,ORD2\n", 3, "expected on 2026-12-03 here and on 2026-12-01"},
		{"bad date", "po_A,next week,txn_1,2026-11-28 10:00:00,usd,1.00,0.00,1.00,charge,ch_1,ORD1\n", 2, "want YYYY-MM-DD HH:MM:SS"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := payoutsOf(t, "stripe", write(tt.body))
			var pe *reconcile.ParseError
			if !errors.As(err, &pe) || pe.Line != tt.line || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("err = %v, want line %d saying %q", err, tt.line, tt.says)
			}
			if len(got) != 0 {
				t.Errorf("a refused file gave payouts %+v", got)
			}
		})
	}
}

// TestAdyenPayout: a batch's MerchantPayout row is its payout, named by
// the transfer reference the bank is sent; a batch carried forward by
// Balancetransfer pays nothing out.
func TestAdyenPayout(t *testing.T) {
	got, err := payoutsOf(t, "adyen", filepath.Join("testdata", "adyen", "sample", "input.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := reconcile.Payout{ID: "TX000000412XT batch 412", Reference: "TX000000412XT",
		Amount: 17910, Stated: 17910, HasStated: true, Currency: "EUR", Line: 14}
	if len(got) != 1 || got[0] != want {
		t.Errorf("payouts = %+v, want %+v", got, want)
	}
	got, err = payoutsOf(t, "adyen", filepath.Join("testdata", "adyen", "balancetransfer", "input.csv"))
	if err != nil || len(got) != 0 {
		t.Errorf("balance carried forward: payouts %+v, err %v; want none", got, err)
	}

	raw, err := os.ReadFile(filepath.Join("testdata", "adyen", "sample", "input.csv"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "batch.csv")
	unnamed := strings.Replace(string(raw), `"TX000000412XT batch 412, AcmeShopECOM"`, "", 1)
	if err := os.WriteFile(path, []byte(unnamed), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = payoutsOf(t, "adyen", path)
	var pe *reconcile.ParseError
	if !errors.As(err, &pe) || pe.Line != 14 || pe.Column != "Modification Reference" || len(got) != 0 {
		t.Errorf("a payout without its reference: payouts %+v, err %v", got, err)
	}
}
