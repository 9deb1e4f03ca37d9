package ledger_test

import (
	"context"
	"slices"
	"testing"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// dayCasesFixture: the channel's refunds of 2026-11-28 (Asia/Shanghai) on
// orders where something can be wrong whatever the file says, and on
// orders where nothing can.
const dayCasesFixture = `
INSERT INTO orders (order_no, amount_minor, currency, status, channel, channel_txn_id, paid_at) VALUES
  ('O-twice',    1000, 'CNY', 'PAID', 'wechatpay', 'wx-1', '2026-11-28 09:00:00+08'),
  ('O-before',   1000, 'CNY', 'PAID', 'wechatpay', 'wx-2', '2026-11-20 09:00:00+08'),
  ('O-later',    1000, 'CNY', 'PAID', 'wechatpay', 'wx-3', '2026-11-28 09:00:00+08'),
  ('O-once',     1000, 'CNY', 'PAID', 'wechatpay', 'wx-4', '2026-11-28 09:00:00+08'),
  ('O-found',    1000, 'CNY', 'PAID', 'wechatpay', 'wx-5', '2026-11-20 09:00:00+08'),
  ('O-1',        1000, 'CNY', 'PAID', 'wechatpay', 'wx-6', '2026-11-20 09:00:00+08'),
  ('O-alipay',   1000, 'CNY', 'PAID', 'alipay',    'ali-1', '2026-11-28 09:00:00+08'),
  ('O-yesterday',1000, 'CNY', 'PAID', 'wechatpay', 'wx-7', '2026-11-27 09:00:00+08');
INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, refunded_at) VALUES
  ('R-twice-1', 'O-twice',  100, 'CNY', 'SUCCEEDED', 'wechatpay', '2026-11-28 10:00:00+08'),
  ('R-twice-2', 'O-twice',  100, 'CNY', 'FAILED',    'wechatpay', '2026-11-28 11:00:00+08'),
  ('R-before-1','O-before', 100, 'CNY', 'SUCCEEDED', 'wechatpay', '2026-11-21 10:00:00+08'),
  ('R-before-2','O-before', 100, 'CNY', 'SUCCEEDED', 'wechatpay', '2026-11-28 10:00:00+08'),
  ('R-later-1', 'O-later',  100, 'CNY', 'SUCCEEDED', 'wechatpay', '2026-11-28 10:00:00+08'),
  ('R-later-2', 'O-later',  100, 'CNY', 'PENDING',   'wechatpay', NULL),
  ('R-once',    'O-once',   100, 'CNY', 'SUCCEEDED', 'wechatpay', '2026-11-28 10:00:00+08'),
  ('R-found',   'O-found',  100, 'CNY', 'SUCCEEDED', 'wechatpay', '2026-11-28 10:00:00+08'),
  ('R-1',       'O-1',      100, 'CNY', 'SUCCEEDED', 'wechatpay', '2026-11-28 10:00:00+08'),
  ('R-ali-1',   'O-alipay', 100, 'CNY', 'SUCCEEDED', 'alipay',    '2026-11-28 10:00:00+08'),
  ('R-ali-2',   'O-alipay', 100, 'CNY', 'SUCCEEDED', 'alipay',    '2026-11-28 11:00:00+08'),
  ('R-yest-1',  'O-yesterday', 100, 'CNY', 'SUCCEEDED', 'wechatpay', '2026-11-27 10:00:00+08'),
  ('R-yest-2',  'O-yesterday', 100, 'CNY', 'SUCCEEDED', 'wechatpay', '2026-11-27 11:00:00+08');
`

// TestDayOrderRefunds: the orders of the day's refunds asked whatever the
// file says are those with another refund of any date or status, with a
// refund row an earlier night's file alone knew, or with a dispute of an
// earlier night; an order refunded once, another channel's orders and
// another day's are not asked, and a shard asks only its own.
func TestDayOrderRefunds(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	if err := db.Exec(ctx, dayCasesFixture); err != nil {
		t.Fatal(err)
	}
	// O-found: an earlier night's file refunded it with no record of ours.
	row := reconcile.Finding{Category: reconcile.MissingLocal, Kind: reconcile.KindRefund, OrderNo: "O-found", RefundNo: "R-x",
		ChannelTxnID: "wxr-x", HasChannel: true, ChannelAmount: 100, Currency: "CNY"}
	runOn(t, db, "run-25", "2026-11-25", []reconcile.Finding{row}, ledger.Outcome{})
	// O-1: an earlier night's file carried a chargeback of it.
	cb := event(reconcile.KindChargeback, "D1", 100, "2026-11-26 11:00")
	runOn(t, db, "run-26", "2026-11-26", nil, ledger.Outcome{DisputeEvents: reconcile.PackEvents(cb)})

	orders := func(shard reconcile.Shard) []string {
		t.Helper()
		got, err := db.DayOrderRefunds(ctx, "wechatpay", testDay, shard)
		if err != nil {
			t.Fatal(err)
		}
		var nos []string
		for _, o := range got {
			nos = append(nos, o.Order.OrderNo)
		}
		slices.Sort(nos)
		return nos
	}
	want := []string{"O-1", "O-before", "O-found", "O-later", "O-twice"}
	if got := orders(reconcile.Shard{}); !slices.Equal(got, want) {
		t.Fatalf("DayOrderRefunds: %v, want %v", got, want)
	}
	var union []string
	for i := range 2 {
		shard := reconcile.Shard{Index: i, Count: 2}
		for _, no := range orders(shard) {
			if owner := reconcile.ShardOf(no, 2); owner != i {
				t.Errorf("shard %s asked %s of shard %d", shard, no, owner)
			}
			union = append(union, no)
		}
	}
	slices.Sort(union)
	if !slices.Equal(union, want) {
		t.Errorf("the shards asked %v together, want %v", union, want)
	}
}
