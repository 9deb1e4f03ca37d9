package reports_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/matcher/payouts"
	"reconcile/reports"
)

// One credit naming two payouts (30.50 + 20.00) brings 50.00: the alert's
// line names them together with their sum, never PAY-0001 with the sum.
func TestAlertNamesAPayoutWithItsOwnAmount(t *testing.T) {
	day := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	pay := func(id string, amount int64) payouts.Open {
		return payouts.Open{Payout: reconcile.Payout{Channel: "shop", ID: id, Amount: amount, Currency: "EUR", ExpectedOn: day}}
	}
	credit := payouts.Entry{Key: "DE89/R1", BankEntry: reconcile.BankEntry{Account: "DE89", Amount: 5000, Currency: "EUR",
		Credit: true, Status: "BOOK", BookedOn: day, BankRef: "R1", Remittance: "SETTLEMENT PAY-0001 PAY-0002"}}
	m := payouts.Match(payouts.Input{Day: day, Payouts: []payouts.Open{pay("PAY-0001", 3050), pay("PAY-0002", 2000)},
		Entries: []payouts.Entry{credit}})
	bd, _ := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	res := reconcile.NewResult(reconcile.Run{ID: "r", Channel: "bank", Day: bd, Format: "camt053", Status: reconcile.RunSucceeded})
	res.Findings = m.Findings
	for _, f := range m.Findings {
		res.Counts[f.Category]++
	}
	res.Payouts = m.Cases
	res.NumberFindings()
	msg := reports.RunMessage(res, 10)
	b, _ := json.Marshal(msg.Blocks)
	text := msg.Text + string(b)
	if strings.Contains(text, "PAY-0001 of EUR 50.50") {
		t.Errorf("the alert gives PAY-0001 (EUR 30.50) the amount of both payouts:\n%s", msg.Text)
	}
}

// A US bank account (time_zone America/New_York): po_1Qmiss, expected on
// the 30th, is missing on the 4th. The Review sheet's Time column of the
// finding must not put it on the 29th: a payout's date and a bank entry's
// are calendar dates (UTC midnight), not instants of the run's zone.
func TestPayoutFindingDateInTheBanksZone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	expected := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	m := payouts.Match(payouts.Input{Day: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC),
		Payouts: []payouts.Open{{Payout: reconcile.Payout{Channel: "stripe", ID: "po_1Qmiss", Amount: 4821350, Currency: "USD", ExpectedOn: expected}}}})
	bd, _ := reconcile.NewBusinessDay("2026-12-04", ny)
	res := reconcile.NewResult(reconcile.Run{ID: "r", Channel: "bank-us", Day: bd, Format: "bai2", Status: reconcile.RunSucceeded})
	res.Findings, res.Payouts = m.Findings, m.Cases
	for _, f := range m.Findings {
		res.Counts[f.Category]++
	}
	res.NumberFindings()
	f, _ := writeAndOpen(t, res)
	rows, err := f.GetRows(reports.SheetReview)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 || len(rows[1]) < 12 {
		t.Fatalf("Review sheet: %q", rows)
	}
	if got := rows[1][11]; !strings.HasPrefix(got, "2026-11-30") {
		t.Errorf("payout_missing of a payout expected on 2026-11-30: Time %q", got)
	}
}
