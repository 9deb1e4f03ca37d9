package channelfeed

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"reconcile"
)

// payoutsOf parses a file, with the options.json beside it when there is
// one, and returns the payouts it tells of.
func payoutsOf(t *testing.T, format, path string) ([]reconcile.Payout, error) {
	t.Helper()
	var got []reconcile.Payout
	opts := loadCaseOptions(t, filepath.Dir(path))
	opts.Payouts = func(p reconcile.Payout) error {
		got = append(got, p)
		return nil
	}
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

	// A report that itemizes the payout itself: its row states the payout.
	got, err = payoutsOf(t, "stripe", write(
		"po_A,2026-12-01 00:00:00,txn_1,2026-11-28 10:00:00,usd,100.00,3.20,96.80,charge,ch_1,ORD1\n"+
			"po_A,2026-12-01 00:00:00,txn_9,2026-11-29 01:00:00,usd,-96.80,0.00,-96.80,payout,po_A,\n"))
	if err != nil || len(got) != 1 || got[0].Amount != 9680 || !got[0].HasStated || got[0].Stated != 9680 || got[0].Rows != 1 {
		t.Errorf("a report with its payout's row: %+v, %v", got, err)
	}

	const h = stPayoutHeader
	runPayoutRefusals(t, "stripe", filepath.Join("testdata", "stripe", "sample"), []badCase{
		{name: "a payout row its rows do not add up to", input: h + "po_A,2026-12-01 00:00:00,txn_1,2026-11-28 10:00:00,usd,100.00,3.20,96.80,charge,ch_1,ORD1\n" +
			"po_A,2026-12-01 00:00:00,txn_9,2026-11-29 01:00:00,usd,-100.00,0.00,-100.00,payout,po_A,\n",
			line: 3, column: "automatic_payout_id", msg: "control total", control: true},
		{name: "two currencies", input: h + "po_A,2026-12-01 00:00:00,txn_1,2026-11-28 10:00:00,usd,1.00,0.00,1.00,charge,ch_1,ORD1\n" +
			"po_A,2026-12-01 00:00:00,txn_2,2026-11-28 10:00:00,eur,1.00,0.00,1.00,charge,ch_2,ORD2\n",
			line: 3, column: "automatic_payout_id", msg: "a payout is in one currency"},
		{name: "two dates", input: h + "po_A,2026-12-01 00:00:00,txn_1,2026-11-28 10:00:00,usd,1.00,0.00,1.00,charge,ch_1,ORD1\n" +
			"po_A,2026-12-03 00:00:00,txn_2,2026-11-28 10:00:00,usd,1.00,0.00,1.00,charge,ch_2,ORD2\n",
			line: 3, column: "automatic_payout_effective_at", msg: "expected on 2026-12-03 here and on 2026-12-01"},
		{name: "bad date", input: h + "po_A,next week,txn_1,2026-11-28 10:00:00,usd,1.00,0.00,1.00,charge,ch_1,ORD1\n",
			line: 2, column: "automatic_payout_effective_at", msg: "want YYYY-MM-DD HH:MM:SS"},
	})

	// Without a net column the row's net is gross − fee, worked out here:
	// a gross an int64 holds in cents but not in thousandths of a cent,
	// or a fee that takes the net past either end, is refused rather than
	// counted in the payout as something else.
	const noNet = "automatic_payout_id,automatic_payout_effective_at,balance_transaction_id,created_utc,currency,gross,fee,reporting_category,source_id,payment_metadata[order_id]\n"
	runPayoutRefusals(t, "stripe", filepath.Join("testdata", "stripe", "sample"), []badCase{
		{name: "a gross past thousandths, no net column",
			input: noNet + "po_A,2026-12-01 00:00:00,txn_1,2026-11-28 10:00:00,usd,9223372036854775.00,3.20,charge,ch_1,ORD1\n",
			line:  2, column: "gross", msg: "amount out of range"},
		{name: "a fee that takes the net past the end, no net column",
			input: noNet + "po_A,2026-12-01 00:00:00,txn_1,2026-11-28 10:00:00,usd,-92233720368547.75,0.01616,refund,re_1,ORD1\n",
			line:  2, column: "gross", msg: "amount out of range"},
	})
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

// runPayoutRefusals parses each case's input with the options of the
// golden case dir, and wants it refused at its line and column, with no
// payouts given.
func runPayoutRefusals(t *testing.T, format, dir string, tests []badCase) {
	t.Helper()
	opts, err := os.ReadFile(filepath.Join(dir, "options.json"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			if opts != nil {
				if err := os.WriteFile(filepath.Join(tmp, "options.json"), opts, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(tmp, "input.csv")
			if err := os.WriteFile(path, []byte(tt.input), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := payoutsOf(t, format, path)
			var pe *reconcile.ParseError
			if !errors.As(err, &pe) || pe.Line != tt.line || pe.Column != tt.column || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want line %d, column %q saying %q", err, tt.line, tt.column, tt.msg)
			}
			if got := errors.Is(err, reconcile.ErrControlTotal); got != tt.control {
				t.Errorf("errors.Is(err, ErrControlTotal) = %v, want %v", got, tt.control)
			}
			if len(got) != 0 {
				t.Errorf("a refused file gave payouts %+v", got)
			}
		})
	}
}

// TestCSVPayouts: the canonical CSV's rows are summed by payout_id, net
// of fees, in the direction of their kind; a payout row states what its
// payout sends to the bank, and alone is its payout.
func TestCSVPayouts(t *testing.T) {
	got, err := payoutsOf(t, "csv", filepath.Join("testdata", "csv", "payouts", "input.csv"))
	if err != nil {
		t.Fatal(err)
	}
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	want := []reconcile.Payout{
		// 100.00 − 1.50 − 20.00; the FAILED payment of line 5 counts nowhere.
		{ID: "PO-1", Amount: 7850, Currency: "EUR", Stated: 7850, HasStated: true, ExpectedOn: day(11, 30), Rows: 2, Line: 2},
		// 50.00 − 0.75 − 10.00 − 15.00: no payout row, the rows are the payout.
		{ID: "PO-2", Amount: 2425, Currency: "EUR", ExpectedOn: day(12, 1), Rows: 2, Line: 3},
		// A refund and its fee: the channel debits the account.
		{ID: "PO-3", Amount: -4050, Currency: "EUR", Stated: -4050, HasStated: true, ExpectedOn: day(12, 2), Rows: 1, Line: 8},
		// A payout row and none of its rows.
		{ID: "PO-4", Amount: 1200, Currency: "EUR", Stated: 1200, HasStated: true, ExpectedOn: day(12, 3), Rows: 0, Line: 10},
	}
	if !slices.Equal(got, want) {
		t.Errorf("payouts =\n%+v\nwant\n%+v", got, want)
	}
	if got, err := payoutsOf(t, "csv", filepath.Join("testdata", "csv", "basic", "input.csv")); err != nil || len(got) != 0 {
		t.Errorf("a file without payout_id: payouts %+v, err %v; want none", got, err)
	}
}

// TestCSVPayoutRefusals: what no payout can be is refused where it is
// read, naming the column.
func TestCSVPayoutRefusals(t *testing.T) {
	const h = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status,payout_id,payout_date\n"
	const pay = "payment,ORD1,,TX1,10.00,EUR,2026-11-28 10:00:00,0.30,,PO-1,2026-12-01\n"
	runPayoutRefusals(t, "csv", filepath.Join("testdata", "csv", "payouts"), []badCase{
		{name: "payout row without its id", input: h + "payout,,,,10.00,EUR,2026-11-28 23:00:00,,,,\n",
			line: 2, column: "payout_id", msg: "a payout row without its payout id"},
		{name: "payout row in a file without payout_id", input: "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n" +
			"payout,,,PO-1,10.00,EUR,2026-11-28 23:00:00\n", line: 2, column: "payout_id", msg: "a payout row without its payout id"},
		{name: "payout row with a fee", input: h + "payout,,,,10.00,EUR,2026-11-28 23:00:00,0.30,,PO-1,\n",
			line: 2, column: "fee", msg: "a fee on a payout row"},
		{name: "fee in fractions of a cent", input: h + pay + "payment,ORD2,,TX2,10.00,EUR,2026-11-28 10:00:00,0.125,,PO-1,\n",
			line: 3, column: "fee", msg: `a fee in fractions of a minor unit leaves the row's net, and so payout "PO-1"'s amount, unknown`},
		{name: "payout in two currencies", input: h + pay + "payment,ORD2,,TX2,10.00,USD,2026-11-28 10:00:00,,,PO-1,\n",
			line: 3, column: "payout_id", msg: "in USD here and in EUR on line 2: a payout is in one currency"},
		{name: "two payout dates", input: h + pay + "payment,ORD2,,TX2,10.00,EUR,2026-11-28 10:00:00,,,PO-1,2026-12-03\n",
			line: 3, column: "payout_date", msg: "expected on 2026-12-03 here and on 2026-12-01 on an earlier row"},
		{name: "payout row of another date", input: h + pay + "payout,,,,9.70,EUR,2026-11-28 23:00:00,,,PO-1,2026-12-02\n",
			line: 3, column: "payout_date", msg: "expected on 2026-12-02 here and on 2026-12-01"},
		{name: "unreadable payout date", input: h + "payment,ORD1,,TX1,10.00,EUR,2026-11-28 10:00:00,,,PO-1,01.12.2026\n",
			line: 2, column: "payout_date", msg: `"01.12.2026": want YYYY-MM-DD`},
		{name: "payout row against its rows", input: h + "payout,,,,10.00,EUR,2026-11-28 23:00:00,,,PO-1,\n" + pay,
			line: 2, column: "amount", msg: `payout "PO-1" pays out 10.00, its rows net to 9.70`, control: true},
		{name: "second payout row", input: h + "payout,,,,10.00,EUR,2026-11-28 23:00:00,,,PO-1,\n" +
			"payout,,,,10.00,EUR,2026-11-28 23:00:00,,,PO-1,\n", line: 3, column: "payout_id", msg: `a second row paying out "PO-1" (the first is line 2)`},
		{name: "row of unknown type in a payout", input: h + "adjustment,ORD1,,TX1,1.00,EUR,2026-11-28 10:00:00,,,PO-1,\n",
			line: 2, column: "payout_id", msg: "which way its money went is not known"},
		{name: "sign on a payment", input: h + "payment,ORD1,,TX1,-10.00,EUR,2026-11-28 10:00:00,,,PO-1,\n",
			line: 2, column: "amount", msg: "amount must be an unsigned plain decimal"},
	})
}

// TestMappedPayouts: a mapped file's rows are summed by its payout
// column as the canonical CSV's are; its payout rows are signed only
// for a payout the channel debits, whatever the mapping's sign.
func TestMappedPayouts(t *testing.T) {
	got, err := payoutsOf(t, "mapped", filepath.Join("testdata", "mapped", "payouts", "input.csv"))
	if err != nil {
		t.Fatal(err)
	}
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	want := []reconcile.Payout{
		// 80.00 − 1.20 − 10.00; the FAILED capture counts nowhere.
		{ID: "PAY-1", Amount: 6880, Currency: "GBP", Stated: 6880, HasStated: true, ExpectedOn: day(11, 30), Rows: 2, Line: 2},
		// 25.00 − 0.40 − 25.00 − 15.00.
		{ID: "PAY-2", Amount: -1540, Currency: "GBP", Stated: -1540, HasStated: true, ExpectedOn: day(12, 1), Rows: 2, Line: 4},
		{ID: "PAY-3", Amount: 1170, Currency: "GBP", ExpectedOn: day(12, 2), Rows: 1, Line: 7},
	}
	if !slices.Equal(got, want) {
		t.Errorf("payouts =\n%+v\nwant\n%+v", got, want)
	}
}

// TestMappedPayoutRefusals: as the canonical CSV's, naming the mapped
// columns as the header writes them.
func TestMappedPayoutRefusals(t *testing.T) {
	const h = "Booked;Event;Order;Refund;Reference;Amount;Currency;Fee;State;Payout;Payout Date\n"
	const capture = "2026-11-28T08:00:00Z;CAPTURE;ORD1;;CAP-1;10.00;GBP;0.30;SETTLED;PAY-1;01.12.2026\n"
	runPayoutRefusals(t, "mapped", filepath.Join("testdata", "mapped", "payouts"), []badCase{
		{name: "payout row without its id", input: h + "2026-11-28T23:00:00Z;PAYOUT;;;PAY-1;9.70;GBP;;SETTLED;;\n",
			line: 2, column: "Payout", msg: "a payout row without its payout id"},
		{name: "payout row with a fee", input: h + "2026-11-28T23:00:00Z;PAYOUT;;;PAY-1;9.70;GBP;0.10;SETTLED;PAY-1;\n",
			line: 2, column: "Fee", msg: "a fee on a payout row"},
		{name: "fee in fractions of a penny", input: h + "2026-11-28T08:00:00Z;CAPTURE;ORD1;;CAP-1;10.00;GBP;0.125;SETTLED;PAY-1;\n",
			line: 2, column: "Fee", msg: "a fee in fractions of a minor unit"},
		{name: "payout in two currencies", input: h + capture + "2026-11-28T09:00:00Z;CAPTURE;ORD2;;CAP-2;10.00;EUR;;SETTLED;PAY-1;\n",
			line: 3, column: "Payout", msg: "in EUR here and in GBP on line 2"},
		{name: "two payout dates", input: h + capture + "2026-11-28T09:00:00Z;CAPTURE;ORD2;;CAP-2;10.00;GBP;;SETTLED;PAY-1;02.12.2026\n",
			line: 3, column: "Payout Date", msg: "expected on 2026-12-02 here and on 2026-12-01"},
		{name: "unreadable payout date", input: h + "2026-11-28T08:00:00Z;CAPTURE;ORD1;;CAP-1;10.00;GBP;;SETTLED;PAY-1;2026-12-01\n",
			line: 2, column: "Payout Date", msg: `"2026-12-01": want the mapping's payout_date_format "02.01.2006"`},
		{name: "payout row against its rows", input: h + capture + "2026-11-28T23:00:00Z;PAYOUT;;;PAY-1;10.00;GBP;;SETTLED;PAY-1;\n",
			line: 3, column: "Amount", msg: `payout "PAY-1" pays out 10.00, its rows net to 9.70`, control: true},
		{name: "batch row in a payout", input: h + "2026-11-28T23:00:00Z;FEE;;;FEE-1;2.00;GBP;;SETTLED;PAY-1;\n",
			line: 2, column: "Payout", msg: `a row of kind batch ("FEE") in payout "PAY-1"`},
	})
}

// TestMappedPayoutDates: payout_date_format takes what time_format
// takes, YYYY-MM-DD by default, and the date is the one in the mapping's
// zone (Europe/Berlin here, an hour ahead of UTC in December).
func TestMappedPayoutDates(t *testing.T) {
	dec1 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ name, format, cell string }{
		{"default", "", "2026-12-01"},
		{"rfc3339", "rfc3339", "2026-11-30T23:30:00Z"},
		{"unix", "unix", "1796081400"},
		{"layout", "02/01/2006", "01/12/2026"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := mappedWith(func(m *Mapping) {
				m.Columns.Payout, m.Columns.PayoutDate, m.PayoutDateFormat = "payout", "paid", tt.format
			})
			var got []reconcile.Payout
			opts := Options{Name: "bill.csv", Location: shanghai, Mapping: m, Payouts: func(p reconcile.Payout) error {
				got = append(got, p)
				return nil
			}}
			input := "type,order,refund,txn,amount,currency,time,fee,status,payout,paid\n" +
				"SALE,ORD1,,TX1,99.80,EUR,2026-11-28 09:12:45,0.80,OK,P1," + tt.cell + "\n"
			if err := (mappedParser{}).Parse(t.Context(), strings.NewReader(input), opts, nil); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Amount != 9900 || !got[0].ExpectedOn.Equal(dec1) {
				t.Errorf("payouts = %+v, want P1 of 99.00 expected on 2026-12-01", got)
			}
		})
	}
}
