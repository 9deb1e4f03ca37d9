package ledger_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// localFixture spans dates, channels and scopes around the business day
// 2026-11-28 in Asia/Shanghai (UTC+8).
const localFixture = `
INSERT INTO orders (order_no, amount_minor, currency, status, channel, channel_txn_id, paid_at) VALUES
  ('O-late',     9980, 'CNY', 'PAID',      'wechatpay', 'wx-1', '2026-11-28 23:59:00+08'),
  ('O-next',     1000, 'CNY', 'PAID',      'wechatpay', 'wx-2', '2026-11-28 16:30:00+00'),
  ('O-midnight', 2000, 'CNY', 'SHIPPED',   'wechatpay', 'wx-3', '2026-11-28 00:00:00+08'),
  ('O-end',      3000, 'CNY', 'PAID',      'wechatpay', 'wx-4', '2026-11-29 00:00:00+08'),
  ('O-alipay',   4000, 'CNY', 'PAID',      'alipay',    'ali-1', '2026-11-28 10:00:00+08'),
  ('O-old',      5000, 'CNY', 'REFUNDING', 'alipay',    'ali-2', '2026-11-01 10:00:00+08'),
  ('O-pending',  6000, 'CNY', 'PENDING',   'wechatpay', NULL,   NULL);
INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, channel_refund_id, refunded_at) VALUES
  ('R-day',    'O-late',    500, 'CNY', 'SUCCEEDED', 'wechatpay', 'wxr-1', '2026-11-28 12:00:00+08'),
  ('R-old',    'O-old',     700, 'CNY', 'SUCCEEDED', 'alipay',    NULL,    '2026-10-01 12:00:00+08'),
  ('R-before', 'O-midnight', 800, 'CNY', 'SUCCEEDED', 'wechatpay', 'wxr-3', '2026-11-27 23:59:59+08'),
  ('R-open',   'O-late',    900, 'CNY', 'PENDING',   'wechatpay', NULL,    NULL);
INSERT INTO idempotency_records (scope, idem_key, request_hash, status) VALUES
  ('payment', 'O-late',     'h1', 'DONE'),
  ('payment', 'O-pending',  'h2', 'IN_PROGRESS'),
  ('refund',  'O-midnight', 'h3', 'IN_PROGRESS'),
  ('refund',  'R-day',      'h4', 'FAILED'),
  ('payment', 'R-old',      'h5', 'DONE');
`

func TestLoadLocal(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	if err := db.Exec(ctx, localFixture+`UPDATE orders SET user_id = 42, created_at = '2026-11-28 23:58:00+08' WHERE order_no = 'O-late';`); err != nil {
		t.Fatal(err)
	}
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	day, err := reconcile.NewBusinessDay("2026-11-28", shanghai)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		tm, err := time.Parse("2006-01-02 15:04:05-07", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}

	orderKeys := []string{"O-late", "O-old", "O-pending", "O-missing", "R-day"}
	refundKeys := []string{"R-day", "R-old", "O-late"}
	want := map[string]reconcile.LocalRecord{
		// by date, and by key too: once
		"payment/O-late": {Kind: reconcile.KindPayment, OrderNo: "O-late", Amount: 9980, Currency: "CNY",
			Status: "PAID", ChannelTxnID: "wx-1", SettledAt: at("2026-11-28 23:59:00+08"), IdemStatus: "DONE",
			Customer: 42, HasCustomer: true, CreatedAt: at("2026-11-28 23:58:00+08")},
		// the first instant of the day belongs to it; an idempotency record
		// of another scope does not
		"payment/O-midnight": {Kind: reconcile.KindPayment, OrderNo: "O-midnight", Amount: 2000, Currency: "CNY",
			Status: "SHIPPED", ChannelTxnID: "wx-3", SettledAt: at("2026-11-28 00:00:00+08")},
		// another channel and date, but asked for by key
		"payment/O-old": {Kind: reconcile.KindPayment, OrderNo: "O-old", Amount: 5000, Currency: "CNY",
			Status: "REFUNDING", ChannelTxnID: "ali-2", SettledAt: at("2026-11-01 10:00:00+08")},
		"payment/O-pending": {Kind: reconcile.KindPayment, OrderNo: "O-pending", Amount: 6000, Currency: "CNY",
			Status: "PENDING", IdemStatus: "IN_PROGRESS"},
		"refund/R-day": {Kind: reconcile.KindRefund, OrderNo: "O-late", RefundNo: "R-day", Amount: 500, Currency: "CNY",
			Status: "SUCCEEDED", ChannelTxnID: "wxr-1", SettledAt: at("2026-11-28 12:00:00+08"), IdemStatus: "FAILED"},
		"refund/R-old": {Kind: reconcile.KindRefund, OrderNo: "O-old", RefundNo: "R-old", Amount: 700, Currency: "CNY",
			Status: "SUCCEEDED", SettledAt: at("2026-10-01 12:00:00+08")},
	}

	got := map[string]reconcile.LocalRecord{}
	n, err := db.LoadLocal(ctx, "wechatpay", day, orderKeys, refundKeys, func(r reconcile.LocalRecord) error {
		k := string(r.Kind) + "/" + r.Key()
		if _, dup := got[k]; dup {
			t.Errorf("record %s came back twice", k)
		}
		got[k] = r
		return nil
	})
	if err != nil {
		t.Fatalf("LoadLocal: %v", err)
	}
	if n != len(got) {
		t.Errorf("LoadLocal returned %d, but called fn %d times", n, len(got))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("record %s missing", k)
			continue
		}
		if !g.SettledAt.Equal(w.SettledAt) {
			t.Errorf("%s SettledAt = %v, want %v", k, g.SettledAt, w.SettledAt)
		}
		if !g.SettledAt.IsZero() && g.SettledAt.Location() != shanghai {
			t.Errorf("%s SettledAt in %v, want the day's zone %v", k, g.SettledAt.Location(), shanghai)
		}
		switch {
		case !w.CreatedAt.IsZero() && !g.CreatedAt.Equal(w.CreatedAt):
			t.Errorf("%s CreatedAt = %v, want %v", k, g.CreatedAt, w.CreatedAt)
		case g.Kind == reconcile.KindPayment && g.CreatedAt.IsZero():
			t.Errorf("%s has no CreatedAt", k)
		case g.Kind == reconcile.KindRefund && !g.CreatedAt.IsZero():
			t.Errorf("%s is a refund with a CreatedAt", k)
		}
		g.SettledAt, w.SettledAt, g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if g != w {
			t.Errorf("%s:\n got %+v\nwant %+v", k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("record %s came back, want it left out", k)
		}
	}

	t.Run("fn error stops the stream", func(t *testing.T) {
		stop := errors.New("stop")
		calls := 0
		_, err := db.LoadLocal(ctx, "wechatpay", day, orderKeys, refundKeys, func(reconcile.LocalRecord) error {
			calls++
			return stop
		})
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("LoadLocal with a failing fn: err = %v after %d calls, want stop after 1", err, calls)
		}
	})
	t.Run("no keys", func(t *testing.T) {
		n, err := db.LoadLocal(ctx, "alipay", day, nil, nil, func(reconcile.LocalRecord) error { return nil })
		if err != nil || n != 1 {
			t.Errorf("LoadLocal(alipay, no keys) = %d, %v; want 1 (O-alipay), nil", n, err)
		}
	})
}

// TestLoadLocalUsesIndexes checks the plan can reach every branch through an
// index: with sequential scans priced out, a branch that has no usable
// index still shows a Seq Scan.
func TestLoadLocalUsesIndexes(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	start, end := time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC), time.Date(2026, 11, 28, 16, 0, 0, 0, time.UTC)
	var plan []string
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{ledger.WindowOrders.SQL(), []any{"wechatpay", start, end}},
		{ledger.WindowRefunds.SQL(), []any{"wechatpay", start, end}},
		{ledger.KeysOrders.SQL(), []any{[]string{"O-1"}, "wechatpay", start, end}},
		{ledger.KeysRefunds.SQL(), []any{[]string{"R-1"}, "wechatpay", start, end}},
	} {
		rows, err := tx.Query(ctx, `EXPLAIN `+q.sql, q.args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	text := strings.Join(plan, "\n")
	for _, want := range []string{"orders_pkey", "orders_paid_at_idx", "refunds_pkey", "refunds_refunded_at_idx", "idempotency_records_pkey"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan does not use %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Seq Scan") {
		t.Errorf("plan has a sequential scan:\n%s", text)
	}
}

// TestRefundsByChannelID: our refunds are found by the channel's refund
// id, of the channel asked only; one whose number is longer than a row's
// key may be is refused, naming it, rather than put on the row.
func TestRefundsByChannelID(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	if err := db.Exec(ctx, localFixture); err != nil {
		t.Fatal(err)
	}
	got, err := db.RefundsByChannelID(ctx, "wechatpay", []string{"wxr-1", "wxr-3", "ali-r"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].RefundNo != "R-before" || got[0].OrderNo != "O-midnight" || got[0].ChannelTxnID != "wxr-3" ||
		got[1].RefundNo != "R-day" || got[1].OrderNo != "O-late" || got[1].ChannelTxnID != "wxr-1" {
		t.Fatalf("got %+v, want R-before (wxr-3) and R-day (wxr-1)", got)
	}
	long := strings.Repeat("R", reconcile.MaxKeyBytes+1)
	if err := db.Exec(ctx, `INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, channel_refund_id, refunded_at)
VALUES ('`+long+`', 'O-late', 100, 'CNY', 'SUCCEEDED', 'wechatpay', 'wxr-long', '2026-11-28 13:00:00+08')`); err != nil {
		t.Fatal(err)
	}
	_, err = db.RefundsByChannelID(ctx, "wechatpay", []string{"wxr-1", "wxr-long"})
	if err == nil || !strings.Contains(err.Error(), `channel refund id "wxr-long" has a refund_no of 2049 bytes`) {
		t.Fatalf("got error %v, want a refusal naming wxr-long and its refund_no's length", err)
	}
}
