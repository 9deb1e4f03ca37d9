package reports_test

import (
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/reports"
)

// disputeResult is a night of a card channel with two new chargebacks,
// one of an order refunded too, and the over_refund that tells it.
func disputeResult(t *testing.T) *reconcile.Result {
	t.Helper()
	day, err := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 10, 15, 0, 0, time.UTC)
	findings := []reconcile.Finding{
		{Category: reconcile.Chargeback, Kind: reconcile.KindChargeback, OrderNo: "ORD-1", ChannelTxnID: "txn_1",
			HasChannel: true, ChannelAmount: 9951, Currency: "USD", HasLocal: true, LocalAmount: 9951, LocalCurrency: "USD",
			OccurredAt: at, FeeMilli: 1_500_000, Related: []string{"refund R-1 of the order, 49.99 USD, SUCCEEDED in our records"},
			Dispute: &reconcile.DisputeFacts{ID: "dp_1", Status: reconcile.DisputeOpen, Reason: "fraudulent", Customer: "10042"}},
		{Category: reconcile.Chargeback, Kind: reconcile.KindChargeback, OrderNo: "=ORD-2", ChannelTxnID: "txn_2",
			HasChannel: true, ChannelAmount: 4949, Currency: "USD", OccurredAt: at, FeeMilli: 1_234,
			Dispute: &reconcile.DisputeFacts{ID: "dp_2", Status: reconcile.DisputeWon}},
		{Category: reconcile.OverRefund, Kind: reconcile.KindChargeback, OrderNo: "ORD-1", HasChannel: true,
			ChannelAmount: 14950, Currency: "USD", HasLocal: true, LocalAmount: 9951, LocalCurrency: "USD",
			Dispute: reconcile.OfDispute("dp_1"), OccurredAt: at},
	}
	reconcile.SortFindings(findings)
	counts := map[reconcile.Category]int{reconcile.Matched: 3, reconcile.Chargeback: 2, reconcile.OverRefund: 1}
	for i := range findings {
		findings[i].Ref = "run-2-000" + string(rune('1'+i))
	}
	return &reconcile.Result{
		Run:         reconcile.Run{ID: "run-2", Channel: "stripe", Day: day, Format: "stripe", Status: reconcile.RunSucceeded},
		ChannelRows: 6, LocalRows: 4, Counts: counts, Findings: findings,
	}
}

func TestChargebacksSheet(t *testing.T) {
	res := disputeResult(t)
	f, _ := writeAndOpen(t, res)
	if got := f.GetSheetList(); strings.Join(got, "|") != "Summary|Review|Chargebacks|Pending|Auto-reversed|Trend" {
		t.Fatalf("sheets: %q", got)
	}
	rows, err := f.GetRows(reports.SheetChargebacks)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Finding", "Order No", "Customer", "Amount", "Fee", "Currency", "Reason", "Opened On", "Status", "Dispute ID", "Channel Txn ID", "Refunds of the Order"},
		// in report order: "=" sorts before "O"
		{"", "=ORD-2", "", "49.49", "0.01234", "USD", "", "2026-11-28 10:15:00", "won", "dp_2", "txn_2"},
		{"", "ORD-1", "10042", "99.51", "15.00", "USD", "fraudulent", "2026-11-28 10:15:00", "open", "dp_1", "txn_1", "refund R-1 of the order, 49.99 USD, SUCCEEDED in our records"},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows: %q", rows)
	}
	for i := range want {
		want[i][0] = rows[i][0] // the refs follow report order
		if strings.Join(rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d:\n got %q\nwant %q", i+1, rows[i], want[i])
		}
	}
	if !strings.HasPrefix(rows[1][0], "run-2-") {
		t.Errorf("finding ref %q", rows[1][0])
	}
	checkMoney(t, f, reports.SheetChargebacks, "D3", "99.51", "99.51", "#,##0.00")
	checkMoney(t, f, reports.SheetChargebacks, "E3", "15.00", "15.00", "#,##0.00")
	// An order number like a formula stays text.
	if v := cellValue(t, f, reports.SheetChargebacks, "B2", true); v != "=ORD-2" {
		t.Errorf("B2: %q", v)
	}
	if formula, _ := f.GetCellFormula(reports.SheetChargebacks, "B2"); formula != "" {
		t.Errorf("B2 is a formula: %q", formula)
	}
}

func TestNoChargebacksNoSheet(t *testing.T) {
	f, _ := writeAndOpen(t, testResult(t))
	for _, s := range f.GetSheetList() {
		if s == reports.SheetChargebacks {
			t.Errorf("a night without chargebacks has a Chargebacks sheet")
		}
	}
}

func TestAlertSaysChargebacks(t *testing.T) {
	msg := reports.RunMessage(disputeResult(t), 3)
	want := "2 new chargebacks (USD 149.00), 1 order refunded and charged back (USD 49.99)"
	if all := messageTexts(t, msg); !strings.Contains(all, want) {
		t.Errorf("blocks say no %q:\n%s", want, all)
	}
	if !strings.Contains(msg.Text, want) {
		t.Errorf("fallback %q says no %q", msg.Text, want)
	}
	if all := messageTexts(t, reports.RunMessage(testResult(t), 3)); strings.Contains(all, "chargeback") {
		t.Errorf("a night without chargebacks speaks of them:\n%s", all)
	}
}
