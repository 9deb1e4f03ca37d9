package main

import (
	"context"
	"testing"
)

// ordersDB: our refund R9 is of order O1, the channel's id of it RF1; O2
// is another customer's order. O3 (100.00 CNY) is refunded 100.00 CNY and
// 100.00 USD. O8 (100.00) is refunded 60 + 70 on the 28th. O4 and O5 are
// paid 50.00 each on the 28th, by T4 and T5.
const ordersDB = `
INSERT INTO orders (order_no, amount_minor, currency, status, channel, channel_txn_id, paid_at) VALUES
  ('O1', 10000, 'CNY', 'REFUNDED', 'shop', 'T1', '2026-11-27 09:00:00+00'),
  ('O2', 10000, 'CNY', 'PAID',     'shop', 'T2', '2026-11-27 09:00:00+00'),
  ('O3', 10000, 'CNY', 'REFUNDED', 'shop', 'T3', '2026-11-27 09:00:00+00'),
  ('O8', 10000, 'CNY', 'REFUNDED', 'shop', 'T8', '2026-11-27 09:00:00+00'),
  ('O4',  5000, 'CNY', 'PAID',     'shop', 'T4', '2026-11-28 12:00:00+00'),
  ('O5',  5000, 'CNY', 'PAID',     'shop', 'T5', '2026-11-28 12:00:00+00');
INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, channel_refund_id, refunded_at) VALUES
  ('R9',  'O1', 10000, 'CNY', 'SUCCEEDED', 'shop', 'RF1',  '2026-11-28 10:00:00+00'),
  ('R3a', 'O3', 10000, 'CNY', 'SUCCEEDED', 'shop', 'RT3a', '2026-11-28 10:00:00+00'),
  ('R3b', 'O3', 10000, 'USD', 'SUCCEEDED', 'shop', 'RT3b', '2026-11-28 10:30:00+00'),
  ('R8a', 'O8',  6000, 'CNY', 'SUCCEEDED', 'shop', 'RT8a', '2026-11-28 10:00:00+00'),
  ('R8b', 'O8',  7000, 'CNY', 'SUCCEEDED', 'shop', 'RT8b', '2026-11-28 11:00:00+00');`

// TestRefundsThatDisagreeWithOurs runs, on PostgreSQL, refunds whose rows
// name another order than ours, a payment whose channel id is our record
// of another order, a refund in another currency than its order, and an
// over-refunded order that a new refund takes over again the night after.
func TestRefundsThatDisagreeWithOurs(t *testing.T) {
	db, dsn := dbWith(t, ordersDB)
	c := newCLI(nil)
	ctx := context.Background()

	// The row on O2 comes first: ours (RF1, the id our record holds) is
	// the original all the same, and nothing is reversed.
	checkNight(t, c, dsn, "2026-11-28", `refund,O2,R9,RF2,100.00,CNY,2026-11-28T09:00:00Z
refund,O1,R9,RF1,100.00,CNY,2026-11-28T10:00:00Z
refund,O3,R3a,RT3a,100.00,CNY,2026-11-28T10:00:00Z
refund,O3,R3b,RT3b,100.00,USD,2026-11-28T10:30:00Z
refund,O8,R8a,RT8a,60.00,CNY,2026-11-28T10:00:00Z
refund,O8,R8b,RT8b,70.00,CNY,2026-11-28T11:00:00Z
payment,O5,,T4,50.00,CNY,2026-11-28T12:00:00Z
`,
		map[string]int{"matched": 5, "order_mismatch": 2, "duplicate_refund": 0, "refund_currency_mismatch": 1, "over_refund": 1,
			"missing_channel": 1},
		"order_mismatch|O5||T4|",
		`under channel id "T4", which our records hold as the payment of order O4`,
		"order_mismatch|O2|R9|RF2|",
		`The channel settled refund R9 (100.00 CNY, channel id "RF2") on order O2, but our refund R9 is of order O1`,
		"refund_currency_mismatch|O3|R3b|RT3b|",
		"over_refund|O8|R8b|RT8b|")
	var journals int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM journals`).Scan(&journals); err != nil {
		t.Fatal(err)
	}
	if journals != 0 {
		t.Errorf("journals after the 28th: got %d, want none", journals)
	}

	// Our R8b failed after all, and a new R8c of 70 settled on the 29th:
	// 130 of 100 again, which the 28th's finding did not name.
	if err := db.Exec(ctx, `
UPDATE refunds SET status = 'FAILED' WHERE refund_no = 'R8b';
INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, channel_refund_id, refunded_at) VALUES
  ('R8c', 'O8', 7000, 'CNY', 'SUCCEEDED', 'shop', 'RT8c', '2026-11-29 09:00:00+00');`); err != nil {
		t.Fatal(err)
	}
	checkNight(t, c, dsn, "2026-11-29", `refund,O8,R8c,RT8c,70.00,CNY,2026-11-29T09:00:00Z
`,
		map[string]int{"matched": 1, "over_refund": 1},
		"over_refund|O8|R8c|RT8c|",
		"Refund R8c took it past the order's amount")
}
