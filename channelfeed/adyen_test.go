package channelfeed

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
)

// TestAdyenSampleFacts pins what the golden file of the sample report must
// say, so a wrong want.json cannot be refreshed into place unnoticed.
func TestAdyenSampleFacts(t *testing.T) {
	rows := parseAll(t, "adyen", filepath.Join("testdata", "adyen", "sample", "input.csv"))
	if got, want := len(rows), 13; got != want {
		t.Fatalf("rows = %d, want %d", got, want)
	}
	count := map[reconcile.Kind]int{}
	for _, r := range rows {
		count[r.Kind]++
		if r.Currency != "EUR" || r.Status != reconcile.StatusSuccess {
			t.Errorf("line %d: currency %s, status %s, want EUR, success", r.Line, r.Currency, r.Status)
		}
	}
	if count[reconcile.KindPayment] != 7 || count[reconcile.KindRefund] != 3 || count[reconcile.KindChargeback] != 1 || count[reconcile.KindBatch] != 2 || len(count) != 4 {
		t.Errorf("kinds = %v, want 7 payments, 3 refunds, 1 chargeback, 2 batch", count)
	}

	cet := time.FixedZone("CET", 60*60)
	p := rows[3]
	if p.OrderNo != "ORD202611280304" || p.Amount != 8000 || p.ChannelTxnID != "B2K7N5QW1Z8X3M6T" || p.FeeMilli != 64000 || p.Line != 5 {
		t.Errorf("line 5 = %+v, want ORD202611280304, Amount 8000, ChannelTxnID B2K7N5QW1Z8X3M6T (Modification Reference), FeeMilli 64000", p)
	}
	if want := time.Date(2026, 11, 27, 11, 31, 40, 0, cet); !p.OccurredAt.Equal(want) {
		t.Errorf("line 5 OccurredAt = %v, want %v", p.OccurredAt, want)
	}
	a, b := rows[8], rows[9]
	if a.RefundNo != "RF202611280302" || b.RefundNo != "RF202611280302" || a.ChannelTxnID == b.ChannelTxnID || a.Amount != 6450 || b.Amount != 6450 {
		t.Errorf("lines 10, 11 = %+v, %+v, want RF202611280302 twice, 64.50, different channel ids", a, b)
	}
	if r := rows[7]; r.Kind != reconcile.KindRefund || r.RefundNo != "RF202611280301" || r.OrderNo != "ORD202611280302" || r.Amount != 4000 {
		t.Errorf("line 9 = %+v, want refund RF202611280301 of ORD202611280302, 40.00", r)
	}
	if cb := rows[10]; cb.Kind != reconcile.KindChargeback || cb.RawKind != "Chargeback" || cb.OrderNo != "ORD202611280306" || cb.Amount != 21000 || cb.FeeMilli != 1500000 ||
		cb.DisputeID != "J5T8W2CN6Q1M9X3B" || cb.PaymentID != "W9H4L2NC7X1R5K8D" {
		t.Errorf("line 12 = %+v, want chargeback of ORD202611280306, gross 210.00, fee 15.00, dispute J5T8… (Modification Reference) of payment W9H4… (Psp Reference)", cb)
	}
	if fee := rows[11]; fee.Kind != reconcile.KindBatch || fee.RawKind != "Fee" || fee.Amount != 120 {
		t.Errorf("line 13 = %+v, want batch Fee 1.20 (the ragged row)", fee)
	}
	if po := rows[12]; po.Kind != reconcile.KindBatch || po.RawKind != "MerchantPayout" || po.Amount != 17910 || po.Line != 14 {
		t.Errorf("line 14 = %+v, want batch MerchantPayout 179.10", po)
	}
}

// TestAdyenChargebacksFacts pins what the golden file of the chargebacks
// case must say: a newer header with Dispute Reference, and the shapes of
// real files (a quoted empty amount, a fee written ".11").
func TestAdyenChargebacksFacts(t *testing.T) {
	byLine := rowsByLine(t, "adyen", "chargebacks")
	tests := []struct {
		line              int
		kind              reconcile.Kind
		orderNo, refundNo string
		dispute, payment  string
		amount, feeMilli  int64
	}{
		{4, reconcile.KindChargeback, "ORD9001", "", "8815000000000901", "8815000000000001", 10000, 200000},
		{5, reconcile.KindChargebackReversal, "ORD9001", "", "8815000000000901", "8815000000000001", 10000, 11000},
		{6, reconcile.KindSecondChargeback, "ORD9001", "", "8815000000000901", "8815000000000001", 10000, 0},
		{7, reconcile.KindChargeback, "", "", "8815000000000301", "8815000000000003", 2500, 0}, // no Merchant Reference, no Dispute Reference
		{8, reconcile.KindChargeback, "ORD9004", "", "8815000000000401", "8815000000000004", 4000, 0},
		{9, reconcile.KindChargebackReversal, "ORD9004", "", "8815000000000402", "8815000000000004", 4000, 0},
		{11, reconcile.KindRefundReversal, "ORD9002", "RF9002", "", "8815000000000002", 5200, 0},
		{12, reconcile.KindOther, "ORD9002", "", "", "", 0, 0}, // NotificationOfChargeback
	}
	for _, tt := range tests {
		r := byLine[tt.line]
		if r.Kind != tt.kind || r.OrderNo != tt.orderNo || r.RefundNo != tt.refundNo || r.DisputeID != tt.dispute || r.PaymentID != tt.payment ||
			r.Amount != tt.amount || r.FeeMilli != tt.feeMilli || r.Currency != "USD" {
			t.Errorf("line %d = %+v, want %s of %q, refund %q, dispute %q, payment %q, %d USD, FeeMilli %d",
				tt.line, r, tt.kind, tt.orderNo, tt.refundNo, tt.dispute, tt.payment, tt.amount, tt.feeMilli)
		}
	}
	if r := byLine[3]; r.FeeMilli != 50000 {
		t.Errorf("line 3 FeeMilli = %d, want 50000 (Markup .50)", r.FeeMilli)
	}
	if po := byLine[13]; po.Kind != reconcile.KindBatch || po.Amount != 2139 {
		t.Errorf("line 13 = %+v, want the MerchantPayout of 21.39 the chargebacks net into", po)
	}
}

func TestAdyenErrors(t *testing.T) {
	sample := readTestdata(t, "adyen", "sample", "input.csv")
	edit := editor(t, sample)
	// Gross Credit (GC) of line 2, ORD202611280301.
	amount := func(s string) string { return edit("EUR,,49.9,1,", "EUR,,"+s+",1,") }
	header := sample[:strings.Index(sample, "\n")+1]
	payout := strings.Index(sample, "AcmeCompanyFAKE,AcmeShopECOM,,,,2026-11-29 00:46:38,CET,MerchantPayout")
	if payout < 0 {
		t.Fatal("no MerchantPayout row in the sample")
	}
	transfer := readTestdata(t, "adyen", "balancetransfer", "input.csv")
	// Line 12 of the sample is a Chargeback; line 5 of chargebacks a
	// ChargebackReversed, line 11 a RefundedReversed.
	chargeback := func(s string) string { return edit("EUR,210,,1,EUR,225,", s) }
	cb := editor(t, readTestdata(t, "adyen", "chargebacks", "input.csv"))

	runBad(t, "adyen", []badCase{
		{"missing column", edit(",Psp Reference,", ",PSP Ref,"), 1, "Psp Reference", "missing required column", false},
		{"missing refund number column", edit(",Modification Merchant Reference,", ",Merchant Ref 2,"), 1, "Modification Merchant Reference", "missing required column", false},
		{"duplicate column", edit(",Reserved10\n", ",Type\n"), 1, "Type", "duplicate column (fields 8 and 30)", false},
		{"duplicate column other case", edit(",Reserved9,", ",net currency,"), 1, "net currency", "duplicate column (fields 14 and 29)", false},
		{"duplicate fee column", edit(",Reserved9,", ",Markup (NC),"), 1, "Markup (NC)", "duplicate column", false},
		{"row longer than the header", edit("0.1,visastandardcredit,<auto>,412,,,,,,,\n", "0.1,visastandardcredit,<auto>,412,,,,,,,,x\n"), 2, "", "row has 31 fields, header has 30", false},
		{"thousands separator", amount(`"1,000.00"`), 2, "Gross Credit (GC)", `"1,000.00": not a plain decimal`, false},
		{"too many decimals", amount("12.345"), 2, "Gross Credit (GC)", `"12.345": more decimals than the currency has`, false},
		{"exponent", amount("1e3"), 2, "Gross Credit (GC)", `"1e3": not a plain decimal`, false},
		{"bare minus", amount("-"), 2, "Gross Credit (GC)", `"-"`, false},
		{"negative amount", amount("-49.9"), 2, "Gross Credit (GC)", "unsigned", false},
		{"plus sign", amount("+49.9"), 2, "Gross Credit (GC)", "unsigned", false},
		{"overflow", amount("99999999999999999999.00"), 2, "Gross Credit (GC)", "out of range", false},
		{"too many decimals in a fee", edit(",0.25,0.05,0.1,", ",0.25,0.051,0.1,"), 2, "Scheme Fees (NC)", "more decimals", false},
		{"empty Gross Credit on Settled", amount(""), 2, "Gross Credit (GC)", "empty amount on a Settled row", false},
		{"empty Gross Debit on Refunded", edit("EUR,40,,1,EUR,40,", "EUR,,,1,EUR,40,"), 9, "Gross Debit (GC)", "empty amount on a Refunded row", false},
		{"debit and credit both set", edit("EUR,,49.9,1,", "EUR,1,49.9,1,"), 2, "Gross Credit (GC)", "both Gross Debit (GC) and Gross Credit (GC) are set", false},
		{"unknown currency", edit("P4D8R2LZ7C5V9H1Q,EUR,", "P4D8R2LZ7C5V9H1Q,XXX,"), 2, "Gross Currency", `unknown currency "XXX"`, false},
		{"lower-case currency", edit("P4D8R2LZ7C5V9H1Q,EUR,", "P4D8R2LZ7C5V9H1Q,eur,"), 2, "Gross Currency", `unknown currency "eur"`, false},
		{"amount without currency", edit("P4D8R2LZ7C5V9H1Q,EUR,", "P4D8R2LZ7C5V9H1Q,,"), 2, "Gross Credit (GC)", `amount "49.9" on a row without Gross Currency`, false},
		{"batch row without Net Currency", edit(",,,,,EUR,1.2\n", ",,,,,,\n"), 13, "Net Currency", "empty Net Currency on a Fee row", false},
		{"bad exchange rate", edit("49.9,1,EUR", "49.9,1:1,EUR"), 2, "Exchange Rate", `"1:1": not a plain decimal`, false},
		{"bad time", edit("2026-11-27 09:14:22", "27/11/2026 09:14"), 2, "Creation Date", `"27/11/2026 09:14": want YYYY-MM-DD HH:MM:SS`, false},
		{"time with zone", edit("2026-11-27 09:14:22", "2026-11-27T09:14:22+01:00"), 2, "Creation Date", "want YYYY-MM-DD HH:MM:SS", false},
		{"unknown time zone", edit("2026-11-27 09:14:22,CET", "2026-11-27 09:14:22,XYZ"), 2, "TimeZone", `unknown time zone "XYZ"`, false},
		{"ambiguous time zone", edit("2026-11-27 09:14:22,CET", "2026-11-27 09:14:22,CST"), 2, "TimeZone", `ambiguous time zone "CST"`, false},
		{"empty Type", edit("CET,Settled,P4D8R2LZ7C5V9H1Q", "CET,,P4D8R2LZ7C5V9H1Q"), 2, "Type", "empty Type", false},
		{"Settled without Merchant Reference", edit("K7T2M9XQ4B1N6W3A,ORD202611280301,", "K7T2M9XQ4B1N6W3A,,"), 2, "Merchant Reference", "empty Merchant Reference on a Settled row", false},
		{"Refunded without Modification Merchant Reference or Reference", edit(",Refunded,N4X9K2RB7W1C5Q8V,EUR,40,,1,EUR,40,,,,,,mcstandarddebit,RF202611280301,", ",Refunded,,EUR,40,,1,EUR,40,,,,,,mcstandarddebit,,"), 9, "Modification Merchant Reference", `Refunded row without a refund number ("") or a Modification Reference`, false},
		{"Refunded with <auto> and no Modification Reference", edit(",Refunded,N4X9K2RB7W1C5Q8V,EUR,40,,1,EUR,40,,,,,,mcstandarddebit,RF202611280301,", ",Refunded,,EUR,40,,1,EUR,40,,,,,,mcstandarddebit,<auto>,"), 9, "Modification Merchant Reference", `without a refund number ("<auto>") or a Modification Reference`, false},
		{"net credit identity broken", edit(",49.5,,0.25,", ",49.4,,0.25,"), 2, "Net Credit (NC)", "49.40 is not Gross Credit (GC) 49.90 − fees 0.40 = 49.50", false},
		{"net debit identity broken", edit(",225,,,15,", ",224,,,15,"), 12, "Net Debit (NC)", "224.00 is not Gross Debit (GC) 210.00 + fees 15.00 = 225.00", false},
		{"Gross Credit on a Chargeback", chargeback("EUR,,210,1,EUR,225,"), 12, "Gross Credit (GC)", `"210" on a Chargeback row, which is booked in Gross Debit (GC)`, false},
		{"empty Gross Debit on a Chargeback", chargeback("EUR,,,1,EUR,225,"), 12, "Gross Debit (GC)", "empty amount on a Chargeback row", false},
		{"unparseable chargeback amount", chargeback("EUR,2l0,,1,EUR,225,"), 12, "Gross Debit (GC)", `"2l0": not a plain decimal`, false},
		{"Gross Debit on a ChargebackReversed", cb(`USD,"",100,1,USD,"",99.89`, `USD,100,,1,USD,"",99.89`), 5, "Gross Debit (GC)", `"100" on a ChargebackReversed row, which is booked in Gross Credit (GC)`, false},
		{"empty Gross Credit on a RefundedReversed", cb("USD,,52,1,USD,,52,,,,,visaclassic,RF9002", "USD,,,1,USD,,52,,,,,visaclassic,RF9002"), 11, "Gross Credit (GC)", "empty amount on a RefundedReversed row", false},
		{"reversal net credit identity broken", cb(",99.89,", ",99.90,"), 5, "Net Credit (NC)", "99.90 is not Gross Credit (GC) 100.00 − fees 0.11 = 99.89", false},
		{"refund reversal net credit identity broken", cb("USD,,52,1,USD,,52,", "USD,,52,1,USD,,51,"), 11, "Net Credit (NC)", "51.00 is not Gross Credit (GC) 52.00 − fees 0.00 = 52.00", false},
		{"reversal larger than its chargeback", cb(`USD,"",100,1,USD,"",99.89`, `USD,"",100.01,1,USD,"",99.90`), 5, "Gross Credit (GC)",
			`chargeback reversal of 100.01 is more than the 100.00 the chargebacks of dispute "8815000000000901" took before it in the file`, false},
		{"fee of a leading dot too precise", cb(",.11,", ",.111,"), 5, "Markup (NC)", `"0.111": more decimals than the currency has`, false},
		{"bare dot", cb(",.11,", ",.,"), 5, "Markup (NC)", `"0.": not a plain decimal`, false},
		{"control total mismatch", edit(",179.1,", ",179.2,"), 14, "Net Debit (NC)", "control total does not add up: MerchantPayout pays out 179.20, the other rows net to 179.10", true},
		{"row missing before the payout", edit("EUR,1.2\n", "EUR,1.3\n"), 14, "Net Debit (NC)", "MerchantPayout pays out 179.10, the other rows net to 179.00", true},
		{"balance transfer off", editor(t, transfer)("EUR,21.5,", "EUR,21.4,"), 6, "Net Debit (NC)", "no MerchantPayout row, so the rows should net to 0 after Balancetransfer; they net to 0.10", true},
		{"truncated", sample[:payout], 14, "Type", "no MerchantPayout or Balancetransfer row, the file ends after line 13 (truncated download?)", true},
		{"header only", header, 2, "Type", "no MerchantPayout or Balancetransfer row", true},
		{"two net currencies", edit(",,,,,EUR,1.2\n", ",,,,,USD,1.2\n"), 13, "Net Currency", "net currency USD in a batch of EUR", false},
		{"second header row", sample + header, 15, "", "a second header row", false},
		{"empty file", "", 0, "", "empty file", false},
		{"only a BOM", "\xef\xbb\xbf", 0, "", "empty file", false},
		{"only blank lines", "\n\n", 0, "", "empty file: no header row", false},
		{"no header row", sample[len(header):], 0, "Company Account", "no header row: no row has a Company Account field", false},
		{"invalid UTF-8", edit("visastandarddebit,,412", "visa\xffstandarddebit,,412"), 12, "Payment Method Variant", "invalid UTF-8", false},
		{"invalid UTF-8 in header", edit("Reserved10\n", "Reserved\xff\n"), 1, "", "field 30: invalid UTF-8", false},
		{"invalid UTF-8 before the header", "Report \xff\n" + sample, 1, "", "field 1: invalid UTF-8", false},
		{"bare quote", edit("ORD202611280301,visa", `ORD2026"11280301,visa`), 2, "", `bare "`, false},
		{"unterminated quote", edit(`"TX000000412XT batch 412, AcmeShopECOM"`, `"TX000000412XT batch 412, AcmeShopECOM`), 14, "", `extraneous or missing "`, false},
	})
}

// TestAdyenCancelMidway checks that a long report stops within ctxEvery
// rows of the cancellation, before its control total is reached.
func TestAdyenCancelMidway(t *testing.T) {
	var b strings.Builder
	b.WriteString("Company Account,Merchant Reference,Psp Reference,Creation Date,TimeZone,Type,Modification Reference,Gross Currency,Gross Debit (GC),Gross Credit (GC),Net Currency,Net Debit (NC),Net Credit (NC),Modification Merchant Reference\n")
	for range 3 * ctxEvery {
		b.WriteString("Acme,ORD1,PSP1,2026-11-28 10:00:00,CET,Settled,MOD1,EUR,,1.00,EUR,,1.00,<auto>\n")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n := 0
	p, _ := Lookup("adyen")
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
