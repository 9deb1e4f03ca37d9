package reports_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/reports"
)

// statementResult is a bank statement's night: one payout arrived, one
// short, one missing, one not yet due, and a credit nothing explains.
func statementResult(t *testing.T) *reconcile.Result {
	t.Helper()
	day, err := reconcile.NewBusinessDay("2026-12-03", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	date := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	findings := []reconcile.Finding{
		{Category: reconcile.PayoutMissing, Kind: reconcile.KindPayout, ChannelTxnID: "po_1Qmiss", HasChannel: true,
			ChannelAmount: 4821350, Currency: "USD", OccurredAt: date("2026-11-30"),
			Payout: &reconcile.PayoutFacts{Channel: "stripe", ID: "po_1Qmiss", ExpectedOn: date("2026-11-30")}},
		{Category: reconcile.PayoutAmountMismatch, Kind: reconcile.KindPayout, ChannelTxnID: "TX412XT batch 412", HasChannel: true,
			ChannelAmount: 17910, Currency: "EUR", HasLocal: true, LocalAmount: 17000, LocalCurrency: "EUR", LocalTxnID: "REF-9",
			OccurredAt: date("2026-12-02"), Payout: &reconcile.PayoutFacts{Channel: "adyen", ID: "TX412XT batch 412",
				ExpectedOn: date("2026-12-02"), Account: "NL91ABNA0417164300", BankRef: "REF-9", BookedOn: date("2026-12-02")}},
		{Category: reconcile.UnexpectedCredit, Kind: reconcile.KindPayout, ChannelTxnID: "NL91ABNA0417164300/REF-7", HasLocal: true,
			LocalAmount: 777, LocalCurrency: "EUR", OccurredAt: date("2026-11-28"),
			Payout: &reconcile.PayoutFacts{Account: "NL91ABNA0417164300", BankRef: "REF-7", BookedOn: date("2026-11-28")}},
	}
	reconcile.SortFindings(findings)
	run := reconcile.Run{ID: "run-b", Channel: "bank-eur", Day: day, Format: "camt053", Status: reconcile.RunSucceeded}
	res := reconcile.NewResult(run)
	res.Findings, res.ChannelRows, res.LocalRows = findings, 9, 4
	for _, f := range findings {
		res.Counts[f.Category]++
	}
	res.NumberFindings()
	res.Payouts = []reconcile.PayoutCase{
		{Payout: reconcile.Payout{Channel: "adyen", ID: "TX412XT batch 412", Reference: "TX412XT", Amount: 17910, Currency: "EUR",
			ExpectedOn: date("2026-12-02")}, Status: reconcile.PayoutShort, Arrived: 17000, ArrivedOn: date("2026-12-02"),
			Account: "NL91ABNA0417164300", BankRefs: []string{"REF-9"}},
		{Payout: reconcile.Payout{Channel: "stripe", ID: "po_1Qarrived", Amount: 12345, Currency: "USD", ExpectedOn: date("2026-12-01")},
			Status: reconcile.PayoutArrived, Arrived: 12345, ArrivedOn: date("2026-12-02"), Account: "NL91ABNA0417164300",
			BankRefs: []string{"REF-1", "REF-2"}},
		{Payout: reconcile.Payout{Channel: "stripe", ID: "po_1Qdue", Amount: 500, Currency: "USD", ExpectedOn: date("2026-12-05")},
			Status: reconcile.PayoutExpected},
		{Payout: reconcile.Payout{Channel: "stripe", ID: "po_1Qmiss", Amount: 4821350, Currency: "USD", ExpectedOn: date("2026-11-30")},
			Status: reconcile.PayoutOverdue},
	}
	return res
}

// TestPayoutsSheet: a statement's night has a Payouts sheet, line by
// line, and a Summary of its own categories only.
func TestPayoutsSheet(t *testing.T) {
	f, _ := writeAndOpen(t, statementResult(t))
	if got := strings.Join(f.GetSheetList(), "|"); got != "Summary|Review|Payouts|Trend" {
		t.Fatalf("sheets: %q", got)
	}
	rows, err := f.GetRows(reports.SheetPayouts)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Channel", "Payout", "Amount", "Currency", "Expected On", "Arrived On", "Arrived Amount", "Status", "Account", "Bank Reference", "Payout Reference"},
		{"adyen", "TX412XT batch 412", "179.10", "EUR", "2026-12-02", "2026-12-02", "170.00", "mismatch", "NL91ABNA0417164300", "REF-9", "TX412XT"},
		{"stripe", "po_1Qarrived", "123.45", "USD", "2026-12-01", "2026-12-02", "123.45", "arrived", "NL91ABNA0417164300", "REF-1\nREF-2"},
		{"stripe", "po_1Qdue", "5.00", "USD", "2026-12-05", "", "", "expected"},
		{"stripe", "po_1Qmiss", "48,213.50", "USD", "2026-11-30", "", "", "missing"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("Payouts sheet:\n got %q\nwant %q", rows, want)
	}
	checkMoney(t, f, reports.SheetPayouts, "C5", "48213.50", "48,213.50", "#,##0.00")
	summary, err := f.GetRows(reports.SheetSummary)
	if err != nil {
		t.Fatal(err)
	}
	var categories []string
	for _, r := range summary {
		if len(r) > 0 && strings.Contains(r[0], "_") {
			categories = append(categories, r[0])
		}
	}
	text := strings.Join(categories, " ")
	for _, c := range reconcile.PayoutCategories {
		if !strings.Contains(text, string(c)) {
			t.Errorf("Summary lacks %s: %q", c, text)
		}
	}
	for _, c := range []string{"missing_local", "over_refund", "duplicate_payment"} {
		if strings.Contains(text, c) {
			t.Errorf("a statement's Summary lists %s: %q", c, text)
		}
	}
}

// TestPayoutAlert: the alert names each payout that did not arrive, or
// arrived short, with its amount and date.
func TestPayoutAlert(t *testing.T) {
	msg := reports.RunMessage(statementResult(t), 10)
	for _, want := range []string{
		"stripe payout po_1Qmiss of USD 48213.50 expected on 2026-11-30 has not arrived",
		"adyen payout TX412XT batch 412 of EUR 179.10 arrived as EUR 170.00",
	} {
		if !strings.Contains(msg.Text+blocksText(msg), want) {
			t.Errorf("alert lacks %q:\n%s", want, msg.Text)
		}
	}
	if got := reports.RunMessage(statementResult(t), 1); !strings.Contains(blocksText(got), "and 1 more payout in the workbook") {
		t.Errorf("top 1: %s", blocksText(got))
	}
}

// blocksText is the text of a message's blocks, as JSON.
func blocksText(msg reports.Message) string {
	b, _ := json.Marshal(msg.Blocks)
	var s string
	// JSON escapes the line breaks of a section: read them back.
	_ = json.Unmarshal([]byte(strconv.Quote(string(b))), &s)
	return strings.ReplaceAll(s, `\n`, "\n")
}
