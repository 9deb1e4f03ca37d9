package ledger_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// runOn completes a run of the wechatpay channel for date with findings
// and dispute events.
func runOn(t *testing.T, db *ledger.DB, id, date string, fs []reconcile.Finding, o ledger.Outcome) {
	t.Helper()
	day, err := reconcile.NewBusinessDay(date, testDay.Location)
	if err != nil {
		t.Fatal(err)
	}
	run := reconcile.Run{ID: id, Channel: "wechatpay", Day: day, Format: "csv", File: "/in/" + date + ".csv", FileSHA256: id,
		StartedAt: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)}
	if err := db.StartRun(context.Background(), run, ledger.Lease{}); err != nil {
		t.Fatal(err)
	}
	run.Status, run.FinishedAt = reconcile.RunSucceeded, run.StartedAt.Add(time.Minute)
	res := &reconcile.Result{Run: run, Counts: map[reconcile.Category]int{}, Findings: fs}
	res.NumberFindings()
	o.Result = res
	if _, err := db.CompleteRun(context.Background(), o); err != nil {
		t.Fatalf("CompleteRun %s: %v", id, err)
	}
}

func event(kind reconcile.Kind, dispute string, amount int64, at string) reconcile.Transaction {
	ts, _ := time.ParseInLocation("2006-01-02 15:04", at, testDay.Location)
	return reconcile.Transaction{Kind: kind, DisputeID: dispute, OrderNo: "O-1", PaymentID: "wx-1", ChannelTxnID: string(kind) + "-" + dispute,
		Amount: amount, Currency: "CNY", FeeMilli: 1_500_000, OccurredAt: ts, Line: 7, Reason: "fraud", RawKind: "Chargeback",
		Status: reconcile.StatusSuccess}
}

// TestDisputeEventsAcrossNights: a night's events are read back by the
// nights after it, by dispute and by order, while its run is current; a
// chargeback's standing moves with later events, apart from its state.
func TestDisputeEventsAcrossNights(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	cb := event(reconcile.KindChargeback, "D1", 100, "2026-11-27 11:00")
	finding := reconcile.Finding{Category: reconcile.Chargeback, Kind: reconcile.KindChargeback, OrderNo: "O-1", ChannelTxnID: cb.ChannelTxnID,
		HasChannel: true, ChannelAmount: 100, Currency: "CNY", FeeMilli: 1_500_000,
		Dispute: &reconcile.DisputeFacts{ID: "D1", Status: reconcile.DisputeOpen, Reason: "fraud", Customer: "42"}, OccurredAt: cb.OccurredAt}
	runOn(t, db, "run-27", "2026-11-27", []reconcile.Finding{finding}, ledger.Outcome{DisputeEvents: reconcile.PackEvents(cb)})

	got, err := db.DisputeEvents(ctx, "wechatpay", testDay, []string{"D1", "D9"})
	if err != nil || len(got) != 1 || got[0] != cb {
		t.Fatalf("DisputeEvents: %+v, %v; want %+v", got, err, cb)
	}
	if same, _ := db.DisputeEvents(ctx, "wechatpay", mustDay(t, "2026-11-27"), []string{"D1"}); len(same) != 0 {
		t.Errorf("the night's own events are earlier to itself: %+v", same)
	}
	disputed, err := db.DisputedOrders(ctx, "wechatpay", testDay, []string{"O-1", "O-2"})
	if err != nil || len(disputed) != 1 || disputed["O-1"] != "D1" {
		t.Errorf("DisputedOrders: %v, %v; want O-1 by D1", disputed, err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO orders (order_no, channel, amount_minor, currency, status, channel_txn_id, paid_at, user_id, created_at)
		VALUES ('O-1', 'wechatpay', 100, 'CNY', 'PAID', 'wx-1', '2026-11-26 09:00+08', 42, '2026-11-26 08:59+08')`); err != nil {
		t.Fatal(err)
	}
	orders, err := db.OrderRefunds(ctx, "wechatpay", testDay, reconcile.Shard{}, []string{"O-1"}, nil)
	if err != nil || len(orders) != 1 || len(orders[0].Disputes) != 1 || orders[0].Disputes[0] != cb ||
		!orders[0].Order.HasCustomer || orders[0].Order.Customer != 42 {
		t.Fatalf("OrderRefunds: %+v, %v; want O-1 of customer 42 with its chargeback", orders, err)
	}
	// Appended after what the list held, the order's events go to it.
	held := []reconcile.OrderRefunds{{Order: reconcile.LocalRecord{OrderNo: "O-0"}}}
	if both, err := db.OrderRefunds(ctx, "wechatpay", testDay, reconcile.Shard{}, []string{"O-1"}, held); err != nil ||
		len(both) != 2 || both[0].Order.OrderNo != "O-0" || len(both[0].Disputes) != 0 || len(both[1].Disputes) != 1 {
		t.Fatalf("OrderRefunds after one held: %+v, %v", both, err)
	}

	// Won the next night: the standing moves, the review state and
	// version stay the reviewer's.
	won := event(reconcile.KindChargebackReversal, "D1", 100, "2026-11-28 09:00")
	runOn(t, db, "run-28", "2026-11-28", nil, ledger.Outcome{DisputeEvents: reconcile.PackEvents(won)})
	var status, state, customer string
	var version int
	if err := db.Pool().QueryRow(ctx, `SELECT dispute_status, state, version, customer FROM findings WHERE dispute_id = 'D1'`).
		Scan(&status, &state, &version, &customer); err != nil {
		t.Fatal(err)
	}
	if status != "won" || state != "OPEN" || version != 0 || customer != "42" {
		t.Errorf("finding: standing %s, state %s, version %d, customer %s; want won, OPEN, 0 (as written), 42", status, state, version, customer)
	}
	if open, err := db.StillOpen(ctx, "wechatpay", time.Now().Add(time.Hour), 50); err != nil || len(open) != 0 {
		t.Errorf("StillOpen: %+v, %v; a won dispute waits for nothing", open, err)
	}
	next := mustDay(t, "2026-11-29")
	if d, _ := db.DisputedOrders(ctx, "wechatpay", next, []string{"O-1"}); len(d) != 0 {
		t.Errorf("a won dispute still holds its order: %v", d)
	}
	if all, _ := db.DisputeEvents(ctx, "wechatpay", next, []string{"D1"}); len(all) != 2 {
		t.Errorf("events after two nights: %+v", all)
	}
	fs, err := db.RunFindings(ctx, "run-27")
	if err != nil || len(fs) != 1 || fs[0].DisputeID() != "D1" || fs[0].Dispute.Reason != "fraud" || fs[0].FeeMilli != 1_500_000 || fs[0].Dispute.Customer != "42" {
		t.Errorf("RunFindings: %+v, %v", fs, err)
	}

	// The night of the 28th run again without the reversal: the
	// superseded run's events no longer count, and the standing says so.
	runOn(t, db, "run-28b", "2026-11-28", nil, ledger.Outcome{})
	if d, _ := db.DisputedOrders(ctx, "wechatpay", next, []string{"O-1"}); d["O-1"] != "D1" {
		t.Errorf("the superseded run's reversal still counts: %v", d)
	}
	if got := standing(t, db, "D1"); got != "open" {
		t.Errorf("standing after the 28th without its reversal: %s, want open", got)
	}
	if open, err := db.StillOpen(ctx, "wechatpay", time.Now().Add(time.Hour), 50); err != nil || len(open) != 1 || open[0].DisputeID() != "D1" {
		t.Errorf("StillOpen: %+v, %v; want the open dispute again", open, err)
	}
}

func standing(t *testing.T, db *ledger.DB, dispute string) string {
	t.Helper()
	var s string
	if err := db.Pool().QueryRow(context.Background(), `SELECT string_agg(f.dispute_status, ',') FROM findings f
		WHERE f.dispute_id = $1 AND f.category = 'chargeback' AND f.state <> 'SUPERSEDED'`, dispute).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStandingSurvivesReplays: a date run again never undoes what a later
// night's file said of a dispute: charged back the 27th, won the 28th,
// lost the 29th; the 28th and then the 27th run again.
func TestStandingSurvivesReplays(t *testing.T) {
	db, _ := ledgertest.DB(t)
	cb := event(reconcile.KindChargeback, "D1", 100, "2026-11-27 11:00")
	won := event(reconcile.KindChargebackReversal, "D1", 100, "2026-11-28 09:00")
	lost := event(reconcile.KindSecondChargeback, "D1", 100, "2026-11-29 09:00")
	finding := func() []reconcile.Finding {
		return []reconcile.Finding{{Category: reconcile.Chargeback, Kind: reconcile.KindChargeback, OrderNo: "O-1", ChannelTxnID: cb.ChannelTxnID,
			HasChannel: true, ChannelAmount: 100, Currency: "CNY", Dispute: &reconcile.DisputeFacts{ID: "D1", Status: reconcile.DisputeOpen}}}
	}
	runOn(t, db, "r27", "2026-11-27", finding(), ledger.Outcome{DisputeEvents: reconcile.PackEvents(cb)})
	runOn(t, db, "r28", "2026-11-28", nil, ledger.Outcome{DisputeEvents: reconcile.PackEvents(won)})
	runOn(t, db, "r29", "2026-11-29", nil, ledger.Outcome{DisputeEvents: reconcile.PackEvents(lost)})
	if got := standing(t, db, "D1"); got != "lost" {
		t.Fatalf("after three nights: %s, want lost", got)
	}
	runOn(t, db, "r28b", "2026-11-28", nil, ledger.Outcome{DisputeEvents: reconcile.PackEvents(won)})
	if got := standing(t, db, "D1"); got != "lost" {
		t.Errorf("the 28th again: %s, want lost still", got)
	}
	runOn(t, db, "r27b", "2026-11-27", finding(), ledger.Outcome{DisputeEvents: reconcile.PackEvents(cb)})
	if got := standing(t, db, "D1"); got != "lost" {
		t.Errorf("the 27th again, its chargeback told anew: %s, want lost", got)
	}
}

// TestDisputedOrdersPerDispute: an order is held by any dispute of it
// that stands, whatever another dispute of it gave back.
func TestDisputedOrdersPerDispute(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	a := event(reconcile.KindChargeback, "A", 100, "2026-11-27 10:00")
	aBack := event(reconcile.KindChargebackReversal, "A", 150, "2026-11-27 11:00")
	b := event(reconcile.KindChargeback, "B", 40, "2026-11-27 12:00")
	runOn(t, db, "r27", "2026-11-27", nil, ledger.Outcome{DisputeEvents: reconcile.PackEvents(a, aBack, b)})
	if d, err := db.DisputedOrders(ctx, "wechatpay", testDay, []string{"O-1"}); err != nil || d["O-1"] != "B" {
		t.Errorf("DisputedOrders: %v, %v; want O-1 held by B", d, err)
	}
}

func mustDay(t *testing.T, date string) reconcile.BusinessDay {
	t.Helper()
	d, err := reconcile.NewBusinessDay(date, testDay.Location)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestMerchantDisputes: the merchant's record of disputes, by the name the
// config gives it.
func TestMerchantDisputes(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	if err := db.CheckDisputes(ctx, "disputes"); err != nil {
		t.Errorf("the reference table: %v", err)
	}
	if _, err := db.Pool().Exec(ctx, `
CREATE SCHEMA shop;
CREATE VIEW shop.disputes AS SELECT dispute_id, channel, order_no, amount_minor, currency, status, opened_at FROM disputes;
CREATE VIEW shop.thin AS SELECT dispute_id, channel FROM disputes;
INSERT INTO disputes VALUES
 ('D1', 'wechatpay', 'O-1', 100, 'CNY', 'needs_response', '2026-11-20 10:00+08'),
 ('D2', 'wechatpay', 'O-2', 200, 'CNY', 'needs_response', '2026-11-21 10:00+08'),
 ('D3', 'wechatpay', 'O-3', 300, 'CNY', 'needs_response', '2026-11-21 23:00+08'),
 ('D4', 'alipay',    'O-4', 400, 'CNY', 'needs_response', '2026-11-21 11:00+08')`); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"shop.disputes": "", "shop.thin": "has no column order_no, amount_minor, currency, status, opened_at",
		"shop.none": `no table or view "shop.none"`} {
		err := db.CheckDisputes(ctx, name)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckDisputes(%s): %v, want %q", name, err, want)
		}
	}
	rec, err := db.RecordedDisputes(ctx, "shop.disputes", "wechatpay", testDay, []string{"D1", "D4", "D9"})
	if err != nil || len(rec) != 1 || rec["D1"].Amount != 100 || rec["D1"].OrderNo != "O-1" || rec["D1"].Status != "needs_response" {
		t.Errorf("RecordedDisputes: %+v, %v; want D1 alone (D4 is another channel's)", rec, err)
	}
	// A seven-day window ends on the 28th for disputes opened on the 21st
	// (Shanghai); D2 was settled by an earlier night.
	runOn(t, db, "run-25", "2026-11-25", nil, ledger.Outcome{DisputeEvents: reconcile.PackEvents(event(reconcile.KindChargeback, "D2", 200, "2026-11-25 10:00"))})
	over, err := db.OverdueDisputes(ctx, "disputes", "wechatpay", testDay, 7*24*time.Hour)
	if err != nil || len(over) != 1 || over[0].ID != "D3" {
		t.Errorf("OverdueDisputes: %+v, %v; want D3 alone", over, err)
	}
}

// TestMerchantDisputesRefused: a record the job cannot read as a dispute
// stops the night, naming the relation and the dispute.
func TestMerchantDisputesRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ row, want string }{
		{`('D1', 'wechatpay', 'O-1', NULL, 'CNY', 'x', '2026-11-21 10:00+08')`, `("mine"): dispute "D1": amount_minor is NULL`},
		{`('D1', 'wechatpay', 'O-1', -5, 'CNY', 'x', '2026-11-21 10:00+08')`, `dispute "D1": amount_minor -5 is negative`},
		{`('D1', 'wechatpay', 'O-1', 5, NULL, 'x', '2026-11-21 10:00+08')`, `dispute "D1": no currency`},
		{`('D1', 'wechatpay', 'O-1', 5, 'CNY', 'x', NULL)`, `dispute "D1": opened_at is NULL`},
		{`(NULL, 'wechatpay', 'O-1', 5, 'CNY', 'x', '2026-11-21 10:00+08')`, `a dispute without a dispute_id`},
	} {
		db, _ := ledgertest.DB(t)
		if _, err := db.Pool().Exec(ctx, `CREATE TABLE mine (dispute_id text, channel text, order_no text, amount_minor bigint,
			currency text, status text, opened_at timestamptz); INSERT INTO mine VALUES `+tc.row); err != nil {
			t.Fatal(err)
		}
		_, err := db.RecordedDisputes(ctx, "mine", "wechatpay", testDay, []string{"D1"})
		if tc.row[1] == 'N' { // no id: found by the overdue question, not by id
			_, err = db.OverdueDisputes(ctx, "mine", "wechatpay", testDay, 7*24*time.Hour)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.row, err, tc.want)
		}
	}
}
