package channelfeed

import (
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
)

const stripeBase = "automatic_payout_id,balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,payment_metadata[order_id],refund_metadata[merchant_refund_id]\n" +
	"po_1,txn_1,2026-11-28 09:12:45,usd,99.80,3.19,96.61,charge,ORD1,\n" +
	"po_1,txn_2,2026-11-28 10:00:00,usd,-10.00,0.00,-10.00,refund,ORD1,RF1\n"

func TestStripeErrors(t *testing.T) {
	edit := editor(t, stripeBase)
	gross := func(s string) string { return edit(",99.80,", ","+s+",") }
	const refundCol = "refund_metadata[merchant_refund_id]"
	const orderCol = "payment_metadata[order_id]"
	// The refund row made a dispute row of gross, fee, net and category.
	dispute := func(s string) string { return edit("-10.00,0.00,-10.00,refund", s) }

	runBad(t, "stripe", []badCase{
		{"missing currency", edit(",currency,", ",ccy,"), 1, "currency", "missing required column", false},
		{"missing gross", edit(",gross,", ",amount,"), 1, "gross", "missing required column", false},
		{"missing balance_transaction_id", edit("balance_transaction_id", "id"), 1, "balance_transaction_id", "missing required column", false},
		{"missing reporting_category", edit("reporting_category", "type"), 1, "reporting_category", "missing required column", false},
		{"missing time", edit("created_utc", "created_at"), 1, "created_utc", "missing required column (nor created", false},
		{"order metadata not selected", edit(orderCol, "payment_metadata[order_no]"), 1, orderCol, "missing required column", false},
		{"order metadata key case differs", edit(orderCol, "payment_metadata[Order_ID]"), 1, orderCol, "missing required column", false},
		{"duplicate column", edit(",fee,", ",gross,"), 1, "gross", "duplicate column (fields 5 and 6)", false},
		{"duplicate column other case", edit(",fee,", ",Currency,"), 1, "Currency", "duplicate column (fields 4 and 6)", false},
		{"duplicate metadata column", edit(refundCol, orderCol), 1, orderCol, "duplicate column (fields 9 and 10)", false},
		{"ragged row", edit("charge,ORD1,\n", "charge,ORD1\n"), 2, "", "row has 9 fields, header has 10", false},
		{"thousands separator", gross(`"1,000.00"`), 2, "gross", `"1,000.00": not a plain decimal`, false},
		{"too many decimals", gross("12.345"), 2, "gross", `"12.345": more decimals than the currency has`, false},
		{"exponent", gross("1e3"), 2, "gross", `"1e3": not a plain decimal`, false},
		{"bare minus", gross("-"), 2, "gross", `"-": not a plain decimal`, false},
		{"empty gross", gross(""), 2, "gross", "empty amount", false},
		{"overflow", gross("99999999999999999999.00"), 2, "gross", "out of range", false},
		{"too large to check net", edit("99.80,3.19,96.61", "92233720368547758.07,0.00,92233720368547758.07"), 2, "net", "cannot be checked", false},
		{"fee too precise", edit(",3.19,", ",3.194201,"), 2, "fee", "more decimals", false},
		{"empty fee", edit(",3.19,", ",,"), 2, "fee", "empty amount", false},
		{"net too precise", edit(",96.61,", ",96.615,"), 2, "net", "more decimals", false},
		{"empty net", edit(",96.61,", ",,"), 2, "net", "empty amount", false},
		{"net is not gross minus fee", edit(",96.61,", ",96.60,"), 2, "net", "control total does not add up: net 96.60, but gross 99.80 − fee 3.19 is 96.61", true},
		{"net ignores a fee fraction", edit("3.19,96.61", "3.1942,96.61"), 2, "net", "is 96.60580", true},
		{"unknown currency", edit("09:12:45,usd", "09:12:45,xxx"), 2, "currency", `unknown currency "xxx"`, false},
		{"empty currency", edit("09:12:45,usd", "09:12:45,"), 2, "currency", `unknown currency ""`, false},
		{"time with T and zone", edit("2026-11-28 09:12:45", "2026-11-28T09:12:45Z"), 2, "created_utc", `"2026-11-28T09:12:45Z": want YYYY-MM-DD HH:MM:SS`, false},
		{"time without seconds", edit("2026-11-28 09:12:45", "2026-11-28 09:12"), 2, "created_utc", "want YYYY-MM-DD HH:MM:SS", false},
		{"empty time", edit("2026-11-28 09:12:45", ""), 2, "created_utc", `""`, false},
		{"negative gross on a charge", edit("99.80,3.19,96.61", "-99.80,3.19,-102.99"), 2, "gross", "negative gross -99.80 on a charge row", false},
		{"positive gross on a refund", edit("-10.00,0.00,-10.00", "10.00,0.00,10.00"), 3, "gross", "positive gross 10.00 on a refund row", false},
		{"positive gross on a dispute", dispute("10.00,15.00,-5.00,dispute"), 3, "gross", "positive gross 10.00 on a dispute row", false},
		{"unparseable gross on a dispute", dispute("-1e3,15.00,-5.00,dispute"), 3, "gross", `"-1e3": not a plain decimal`, false},
		{"negative gross on a dispute reversal", dispute("-10.00,0.00,-10.00,dispute_reversal"), 3, "gross", "negative gross -10.00 on a dispute_reversal row", false},
		{"dispute net is not gross minus fee", dispute("-10.00,15.00,-5.00,dispute"), 3, "net", "net -5.00, but gross -10.00 − fee 15.00 is -25.00", true},
		{"dispute reversal larger than its disputes", "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,payment_metadata[order_id]\n" +
			"txn_1,2026-11-28 09:00:00,usd,-50.00,15.00,-65.00,dispute,dp_1,ORD1\n" +
			"txn_2,2026-11-28 10:00:00,usd,-20.00,0.00,-20.00,dispute,dp_1,ORD1\n" +
			"txn_3,2026-11-28 11:00:00,usd,70.01,0.00,70.01,dispute_reversal,dp_1,ORD1\n",
			4, "gross", `chargeback reversal of 70.01 is more than the 70.00 the chargebacks of dispute "dp_1" took before it in the file`, false},
		// Without a fee column the fee is gross − net: one past an int64
		// in thousandths of a cent would be a wrong fee, not an error.
		{"fee past the end, no fee column", "balance_transaction_id,created_utc,currency,gross,net,reporting_category,payment_metadata[order_id]\n" +
			"txn_1,2026-11-28 09:00:00,usd,1.00,-92233720368546.76,charge,ORD1\n",
			2, "net", "amount out of range", false},
		{"row without payout", edit("po_1,txn_2", ",txn_2"), 3, "automatic_payout_id", "empty automatic_payout_id", false},
		{"empty balance_transaction_id", edit("po_1,txn_2", "po_1,"), 3, "balance_transaction_id", "empty balance_transaction_id", false},
		{"empty reporting_category", edit(",refund,", ",,"), 3, "reporting_category", "empty reporting_category", false},
		{"invalid UTF-8", edit("ORD1,\n", "ORD\xff,\n"), 2, orderCol, "invalid UTF-8", false},
		{"invalid UTF-8 in header", edit(",net,", ",n\xffet,"), 1, "", "header field 7: invalid UTF-8", false},
		{"bare quote", edit("txn_1", `tx"n_1`), 2, "", "bare \"", false},
		{"unterminated quote", edit("-10.00,0.00", `"-10.00,0.00`), 3, "", "extraneous or missing \"", false},
		{"empty file", "", 0, "", "empty file", false},
		{"only a BOM", "\xef\xbb\xbf", 0, "", "empty file", false},
		{"only blank lines", "\n\n", 0, "", "empty file: no header row", false},
		{"Dashboard export 2016", "id,Type,Source,Amount,Fee,Net,Currency,Created (UTC),Available On (UTC),Description,Customer Facing Amount,Customer Facing Currency,Transfer,Transfer Date (UTC)\n" +
			"txn_1,charge,ch_1,49.99,1.75,48.24,usd,2016-11-28 09:12,2016-11-30 00:00,Order 1,49.99,usd,po_1,2016-12-01 00:00\n",
			1, "", "this is the Stripe Dashboard balance export (id,Type,Source,Amount,…), not the Reporting API report", false},
		{"Dashboard export 2022", "id,Type,Source,Amount,Fee,Destination Platform Fee,Destination Platform Fee Currency,Net,Currency,Created (UTC),Available On (UTC),Description,Customer Facing Amount,Customer Facing Currency,Transfer,Transfer Date (UTC),Transfer Group,order_id (metadata)\n",
			1, "", "Dashboard balance export", false},
		{"API JSON", `{"object":"list","data":[{"id":"txn_1","amount":4999}]}`, 1, "", "a JSON document", false},
	})
}

// TestStripeOptionsKeys checks that the configured metadata keys, not the
// defaults, name the columns that must be there.
func TestStripeOptionsKeys(t *testing.T) {
	p, _ := Lookup("stripe")
	err := p.Parse(t.Context(), strings.NewReader(stripeBase), Options{Name: "bill.csv", OrderKey: "order_no"}, nil)
	var pe *reconcile.ParseError
	if !errors.As(err, &pe) || pe.Line != 1 || pe.Column != "payment_metadata[order_no]" {
		t.Fatalf("OrderKey order_no: err = %v, want line 1, column payment_metadata[order_no]", err)
	}
	var got []reconcile.Transaction
	// Another refund key: the report's refund_metadata column is not it,
	// and the refund row has no source_id either, so nothing links it.
	err = p.Parse(t.Context(), strings.NewReader(stripeBase), Options{Name: "bill.csv", RefundKey: "refund_no"}, func(tx reconcile.Transaction) error {
		got = append(got, tx)
		return nil
	})
	if err != nil || len(got) != 2 || got[1].Kind != reconcile.KindOther || got[1].RawKind != "refund without refund_metadata[refund_no] or source_id" {
		t.Fatalf("RefundKey refund_no: rows %+v, err %v; want the refund unrecognised", got, err)
	}
	got = nil
	base := strings.Replace(stripeBase, "payment_metadata[order_id]", "Payment_Metadata[order_id]", 1)
	err = p.Parse(t.Context(), strings.NewReader(base), Options{Name: "bill.csv"}, func(tx reconcile.Transaction) error {
		got = append(got, tx)
		return nil
	})
	if err != nil || len(got) != 2 || got[0].OrderNo != "ORD1" {
		t.Fatalf("upper-case metadata prefix: rows %+v, err %v; want 2 rows, the first for ORD1", got, err)
	}
}

// TestStripeSampleFacts pins what the golden file of the sample report must
// say, so a wrong want.json cannot be refreshed into place unnoticed.
func TestStripeSampleFacts(t *testing.T) {
	rows := parseAll(t, "stripe", filepath.Join("testdata", "stripe", "sample", "input.csv"))
	if got, want := len(rows), 14; got != want {
		t.Fatalf("rows = %d, want %d", got, want)
	}
	kinds := map[reconcile.Kind]int{}
	byID := map[string]reconcile.Transaction{}
	var rf0203 []reconcile.Transaction
	for _, r := range rows {
		kinds[r.Kind]++
		byID[r.ChannelTxnID] = r
		if r.Kind == reconcile.KindRefund && r.RefundNo == "RF202611280203" {
			rf0203 = append(rf0203, r)
		}
		if r.Currency != "USD" || r.Status != reconcile.StatusSuccess {
			t.Errorf("line %d: currency %s, status %s, want USD, success", r.Line, r.Currency, r.Status)
		}
	}
	if want := map[reconcile.Kind]int{reconcile.KindPayment: 7, reconcile.KindRefund: 4, reconcile.KindChargeback: 1, reconcile.KindChargebackReversal: 1, reconcile.KindBatch: 1}; !equalCounts(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}

	p := byID["txn_3FAKEbaltxn0000000004"]
	if p.Kind != reconcile.KindPayment || p.OrderNo != "ORD202611280204" || p.Amount != 7500 || p.FeeMilli != 248000 || p.Line != 5 {
		t.Errorf("txn …0004 = %+v, want payment ORD202611280204, Amount 7500, FeeMilli 248000, Line 5", p)
	}
	// created_utc is read as UTC whatever the business zone.
	if want := time.Date(2026, 11, 28, 11, 2, 51, 0, time.UTC); !p.OccurredAt.Equal(want) {
		t.Errorf("txn …0004 OccurredAt = %v, want %v", p.OccurredAt, want)
	}

	if len(rf0203) != 2 || rf0203[0].ChannelTxnID == rf0203[1].ChannelTxnID ||
		rf0203[0].Amount != 1500 || rf0203[1].Amount != 1500 || rf0203[0].OrderNo != "ORD202611280203" {
		t.Errorf("RF202611280203 rows = %+v, want two refunds of 1500 for ORD202611280203 with different channel ids", rf0203)
	}
	if r := byID["txn_3FAKEbaltxn0000000008"]; r.Kind != reconcile.KindRefund || r.RefundNo != "RF202611280201" || r.Amount != 12000 {
		t.Errorf("txn …0008 = %+v, want refund RF202611280201 of 12000 (gross -120.00, sign removed)", r)
	}

	d := byID["txn_3FAKEbaltxn0000000012"]
	if d.Kind != reconcile.KindChargeback || d.RawKind != "dispute" || d.OrderNo != "ORD202611280206" || d.Amount != 3250 || d.FeeMilli != 1500000 ||
		d.DisputeID != "dp_1FAKEdispute00000001" || d.PaymentID != "pi_3FAKEintent0000000006" || d.Reason != "fraudulent" {
		t.Errorf("dispute = %+v, want chargeback of ORD202611280206, Amount 3250, FeeMilli 1500000, dispute dp_…01 of pi_…06, fraudulent", d)
	}
	// The reversal of a dispute of an earlier day: no chargeback of this
	// file to hold it to.
	if d := byID["txn_3FAKEbaltxn0000000013"]; d.Kind != reconcile.KindChargebackReversal || d.RawKind != "dispute_reversal" || d.Amount != 5800 ||
		d.DisputeID != "dp_1FAKEdispute00000000" || d.PaymentID != "pi_3FAKEintent0000000000" {
		t.Errorf("dispute reversal = %+v, want chargeback_reversal of dispute dp_…00, pi_…00, Amount 5800", d)
	}
	if f := byID["txn_3FAKEbaltxn0000000014"]; f.Kind != reconcile.KindBatch || f.RawKind != "fee" || f.Amount != 200 || f.OrderNo != "" {
		t.Errorf("fee row = %+v, want batch, fee, Amount 200, no order", f)
	}
}

// TestStripeDisputesFacts pins what the golden file of the disputes case
// must say: a balance change report with the dispute columns.
func TestStripeDisputesFacts(t *testing.T) {
	byLine := rowsByLine(t, "stripe", "disputes")
	tests := []struct {
		line                      int
		kind                      reconcile.Kind
		orderNo, dispute, payment string
		amount, feeMilli          int64
	}{
		{3, reconcile.KindChargeback, "ORD7001", "dp_1DSP0001", "pi_1DSP0001", 8000, 1500000},
		{4, reconcile.KindChargebackReversal, "ORD7001", "dp_1DSP0001", "pi_1DSP0001", 8000, -1500000}, // the fee returned
		{5, reconcile.KindChargeback, "", "dp_1DSP0002", "ch_1DSP0009", 2500, 1500000},                 // no order number, no payment intent
		{6, reconcile.KindChargebackReversal, "", "dp_1DSP0002", "ch_1DSP0009", 1000, 0},               // partly reversed
		{7, reconcile.KindChargeback, "ORD7003", "txn_1DSP0006", "pi_1DSP0010", 500, 0},                // no source_id
		{8, reconcile.KindChargeback, "ORD7004", "du_1DSP0003", "pi_1DSP0011", 1200, 0},
		{9, reconcile.KindOther, "ORD7005", "", "", 3000, 0}, // refund_failure
		{10, reconcile.KindBatch, "", "", "", 700, 0},        // issuing_dispute
	}
	for _, tt := range tests {
		r := byLine[tt.line]
		if r.Kind != tt.kind || r.OrderNo != tt.orderNo || r.DisputeID != tt.dispute || r.PaymentID != tt.payment || r.Amount != tt.amount || r.FeeMilli != tt.feeMilli {
			t.Errorf("line %d = %+v, want %s of %q, dispute %q, payment %q, Amount %d, FeeMilli %d", tt.line, r, tt.kind, tt.orderNo, tt.dispute, tt.payment, tt.amount, tt.feeMilli)
		}
	}
	if r := byLine[5]; r.Reason != "product_not_received" {
		t.Errorf("line 5 Reason = %q, want product_not_received", r.Reason)
	}
}

func equalCounts(a, b map[reconcile.Kind]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestStripePayoutNet recomputes the sample's payout amount, the figure
// ops hold against the bank deposit: Σnet per automatic_payout_id. Since
// the parser holds every row to net = gross − fee, Σ(gross − fee) over the
// parsed rows must give the same figure; the parsed rows carry the fee but
// not the sign of gross, which comes from the file.
func TestStripePayoutNet(t *testing.T) {
	path := filepath.Join("testdata", "stripe", "sample", "input.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	netByPayout := map[string]int64{}
	signByLine := map[int]int64{}
	for i, rec := range recs[1:] {
		net, err := reconcile.ParseAmount(rec[col["net"]], "USD")
		if err != nil {
			t.Fatal(err)
		}
		netByPayout[rec[col["automatic_payout_id"]]] += net
		signByLine[i+2] = 1
		if strings.HasPrefix(rec[col["gross"]], "-") {
			signByLine[i+2] = -1
		}
	}
	if got, want := netByPayout, map[string]int64{"po_1FAKEpayout00000000001": 32430}; len(got) != 1 || got["po_1FAKEpayout00000000001"] != want["po_1FAKEpayout00000000001"] {
		t.Errorf("Σnet per payout = %v, want %v", got, want)
	}

	var milli int64
	for _, r := range parseAll(t, "stripe", path) {
		milli += signByLine[r.Line]*r.Amount*1000 - r.FeeMilli
	}
	if milli != 32430*1000 {
		t.Errorf("Σ(gross − fee) of the parsed rows = %s, want 324.30", reconcile.FormatDecimal(milli, 5))
	}
}

// TestStripeCancelMidway checks that a long report stops within ctxEvery
// rows of the cancellation.
func TestStripeCancelMidway(t *testing.T) {
	var b strings.Builder
	b.WriteString("balance_transaction_id,created_utc,currency,gross,reporting_category,payment_metadata[order_id]\n")
	for range 3 * ctxEvery {
		b.WriteString("txn_1,2026-11-28 00:00:00,usd,1.00,charge,ORD1\n")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n := 0
	p, _ := Lookup("stripe")
	err := p.Parse(ctx, strings.NewReader(b.String()), Options{Name: "big.csv"}, func(reconcile.Transaction) error {
		n++
		if n == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n > ctxEvery {
		t.Errorf("emitted %d rows after cancel, want at most %d", n, ctxEvery)
	}
}

// TestStripeRowsWithoutOurNumbers: a charge or refund our services did not
// create carries no metadata of ours. It is money all the same: surfaced
// for review, and the rest of the file is reconciled.
func TestStripeRowsWithoutOurNumbers(t *testing.T) {
	raw, err := os.ReadFile("testdata/stripe/sample/input.csv")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Replace(string(raw), ",ORD202611280201,\n", ",,\n", 1)
	in = strings.Replace(in, ",ORD202611280202,RF202611280201\n", ",ORD202611280202,\n", 1)
	if in == string(raw) {
		t.Fatal("sample changed: the edits did not apply")
	}
	var other []reconcile.Transaction
	n := 0
	err = stripeParser{}.Parse(t.Context(), strings.NewReader(in), Options{Name: "s.csv"}, func(tx reconcile.Transaction) error {
		n++
		if tx.Kind == reconcile.KindOther && strings.Contains(tx.RawKind, "without") {
			other = append(other, tx)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 14 || len(other) != 1 {
		t.Fatalf("got %d rows, %d without our numbers; want 14 and 1", n, len(other))
	}
	if got, want := other[0].RawKind, "charge without payment_metadata[order_id]"; got != want || other[0].Amount != 4999 {
		t.Errorf("charge: got %q %d, want %q 4999", got, other[0].Amount, want)
	}
}

// TestStripeRefundsWithoutOurNumber: merchants rarely tag refunds, so a
// report may lack the refund metadata column or leave it empty; such a
// refund is a refund still, to be matched by its re_… (source_id).
func TestStripeRefundsWithoutOurNumber(t *testing.T) {
	for name, in := range map[string]string{
		"no refund metadata column": "balance_transaction_id,created_utc,currency,gross,reporting_category,source_id,payment_metadata[order_id]\n" +
			"txn_1,2026-11-28 09:12:45,usd,99.80,charge,ch_1,ORD1\n" +
			"txn_2,2026-11-28 10:00:00,usd,-10.00,refund,re_2,ORD1\n",
		"empty refund metadata": "balance_transaction_id,created_utc,currency,gross,reporting_category,source_id,payment_metadata[order_id],refund_metadata[merchant_refund_id]\n" +
			"txn_1,2026-11-28 09:12:45,usd,99.80,charge,ch_1,ORD1,\n" +
			"txn_2,2026-11-28 10:00:00,usd,-10.00,refund,re_2,ORD1,\n",
	} {
		t.Run(name, func(t *testing.T) {
			var got []reconcile.Transaction
			err := stripeParser{}.Parse(t.Context(), strings.NewReader(in), Options{Name: "s.csv"}, func(tx reconcile.Transaction) error {
				got = append(got, tx)
				return nil
			})
			if err != nil || len(got) != 2 {
				t.Fatalf("rows %+v, err %v", got, err)
			}
			r := got[1]
			if r.Kind != reconcile.KindRefund || r.RefundNo != "" || r.OrderNo != "ORD1" || r.ChannelTxnID != "txn_2" ||
				r.ChannelRefundID != "re_2" || r.RefundID() != "re_2" || r.Amount != 1000 {
				t.Errorf("refund row: %+v, want a refund of ORD1 of 10.00 to match by re_2", r)
			}
		})
	}
}
