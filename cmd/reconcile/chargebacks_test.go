package main

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"reconcile"
	"reconcile/ledger"
)

// chargebackDB is a card shop whose customers' banks take money back.
// CB1 is refunded in full on the 28th (CR1) and charged back on the 29th;
// CB2 is charged back on the 28th and refunded in full on the 29th; CB3's
// chargeback names no order, only the payment's id (T3), and is won on
// the 29th; CB4 has a reversal the 28th that no chargeback explains.
const chargebackDB = `
INSERT INTO orders (order_no, user_id, amount_minor, currency, status, channel, channel_txn_id, created_at, paid_at) VALUES
  ('CB1', 1, 10000, 'USD', 'REFUNDED', 'shop', 'T1', '2026-11-20 09:00:00+00', '2026-11-20 09:00:01+00'),
  ('CB2', 2, 10000, 'USD', 'REFUNDED', 'shop', 'T2', '2026-11-20 09:00:00+00', '2026-11-20 09:00:01+00'),
  ('CB3', 3,  8000, 'USD', 'PAID',     'shop', 'T3', '2026-11-20 09:00:00+00', '2026-11-20 09:00:01+00'),
  ('CB4', 4,  5000, 'USD', 'PAID',     'shop', 'T4', '2026-11-20 09:00:00+00', '2026-11-20 09:00:01+00');
INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, channel_refund_id, refunded_at) VALUES
  ('CR1', 'CB1', 10000, 'USD', 'SUCCEEDED', 'shop', 'RT1', '2026-11-28 10:00:00+00'),
  ('CR2', 'CB2', 10000, 'USD', 'SUCCEEDED', 'shop', 'RT2', '2026-11-29 10:00:00+00');`

const chargebackHeader = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status,dispute_id,payment_txn_id,reason\n"

const chargebackNight1 = `refund,CB1,CR1,RT1,100.00,USD,2026-11-28T10:00:00Z,,,,,
chargeback,CB2,,K2,100.00,USD,2026-11-28T11:00:00Z,15.00,,D2,T2,fraudulent
chargeback,,,K3,80.00,USD,2026-11-28T12:00:00Z,15.00,,D3,T3,product_not_received
chargeback_reversal,CB4,,K9,10.00,USD,2026-11-28T13:00:00Z,,,D9,T4,
`

const chargebackNight2 = `chargeback,CB1,,K1,100.00,USD,2026-11-29T09:00:00Z,15.00,,D1,T1,fraudulent
refund,CB2,CR2,RT2,100.00,USD,2026-11-29T10:00:00Z,,,,,
chargeback_reversal,CB3,,K3r,80.00,USD,2026-11-29T12:00:00Z,,,D3,T3,
`

// cardDay runs the card shop's night from a canonical CSV with the
// dispute columns.
func cardDay(t *testing.T, c *cli, dsn, date, body string, extra ...string) string {
	t.Helper()
	return shopFile(t, c, dsn, chargebackHeader, date, body, extra...)
}

func disputeStanding(t *testing.T, db *ledger.DB) string {
	t.Helper()
	rows, err := db.Pool().Query(context.Background(), `
SELECT f.dispute_id || '=' || f.dispute_status FROM findings f JOIN runs r ON r.id = f.run_id
 WHERE f.category = 'chargeback' AND r.status = 'SUCCEEDED' AND r.superseded_by IS NULL ORDER BY f.dispute_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestChargebacksAcrossNights: rule 14 on PostgreSQL. A refund and a
// chargeback of one order are told the night the second arrives,
// whichever comes first; a chargeback named by the payment's id finds its
// order and is won the next night; the nights again (replayed, forced,
// the same rows in a later file) tell nothing twice.
func TestChargebacksAcrossNights(t *testing.T) {
	db, dsn := dbWith(t, chargebackDB)
	c := newCLI(nil)
	out1 := cardDay(t, c, dsn, "2026-11-28", chargebackNight1)
	s1 := readSummary(t, out1)
	want1 := map[string]int{"matched": 1, "chargeback": 2, "dispute_mismatch": 1, "over_refund": 0, "unrecognized": 0}
	for cat, n := range want1 {
		if s1.Counts[cat] != n {
			t.Errorf("night 1 %s: got %d, want %d (%v)", cat, s1.Counts[cat], n, s1.Counts)
		}
	}
	sheet := sheetText(t, out1, "2026-11-28", "Chargebacks")
	for _, want := range []string{"CB2|2|100.00|15.00|USD|fraudulent|", "|open|D2|K2|", "CB3|3|80.00|15.00|USD|product_not_received|"} {
		if !strings.Contains(sheet, want) {
			t.Errorf("night 1's Chargebacks sheet lacks %q:\n%s", want, sheet)
		}
	}
	if !strings.Contains(c.out.String(), "2 new chargebacks (USD 180.00)") {
		t.Errorf("night 1's alert does not count the chargebacks:\n%s", c.out)
	}

	out2 := cardDay(t, c, dsn, "2026-11-29", chargebackNight2)
	s2 := readSummary(t, out2)
	want2 := map[string]int{"matched": 1, "chargeback": 1, "over_refund": 2, "dispute_mismatch": 0}
	for cat, n := range want2 {
		if s2.Counts[cat] != n {
			t.Errorf("night 2 %s: got %d, want %d (%v)", cat, s2.Counts[cat], n, s2.Counts)
		}
	}
	review := sheetText(t, out2, "2026-11-29", "Review")
	for _, want := range []string{
		"Order CB1 was paid 100.00 USD and has been refunded 200.00 USD in 1 refund and 1 chargeback: 100.00 USD more than was paid. Chargeback D1 took it past",
		"Order CB2 was paid 100.00 USD and has been refunded 200.00 USD in 1 refund and 1 chargeback: 100.00 USD more than was paid. Refund CR2 took it past",
	} {
		if !strings.Contains(review, want) {
			t.Errorf("night 2's Review sheet lacks %q:\n%s", want, review)
		}
	}
	if !strings.Contains(c.out.String(), "1 new chargeback (USD 100.00), 2 orders refunded and charged back (USD 200.00)") {
		t.Errorf("night 2's alert:\n%s", c.out)
	}
	if got := disputeStanding(t, db); got != "D1=open D2=open D3=won" {
		t.Errorf("standing after night 2: %s", got)
	}

	// Again: the same file is a replay; a forced run finds the same; the
	// night's rows again in the next night's file are not new.
	cardDay(t, c, dsn, "2026-11-29", chargebackNight2)
	again := readSummary(t, cardDay(t, c, dsn, "2026-11-29", chargebackNight2, "--force"))
	if again.RunID == s2.RunID || !maps.Equal(again.Counts, s2.Counts) {
		t.Errorf("night 2 forced: run %s counts %v; want a new run with %v", again.RunID, again.Counts, s2.Counts)
	}
	s3 := readSummary(t, cardDay(t, c, dsn, "2026-11-30", chargebackNight2))
	if n := s3.Counts["chargeback"] + s3.Counts["over_refund"] + s3.Counts["dispute_mismatch"]; n != 0 {
		t.Errorf("night 3 with night 2's rows again: %v; want nothing told again", s3.Counts)
	}
	if got := disputeStanding(t, db); got != "D1=open D2=open D3=won" {
		t.Errorf("standing after the replays: %s", got)
	}
	var events int
	db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM dispute_events e JOIN runs r ON r.id = e.run_id
 WHERE r.status = 'SUCCEEDED' AND r.superseded_by IS NULL`).Scan(&events)
	if events != 5 {
		t.Errorf("current dispute events: %d, want 5 (each once: three the 28th, two the 29th)", events)
	}
}

// TestChargebacksInFourShards: an order's chargeback and its refund in
// different shards still meet, and the chargeback placed by the payment's
// id is told by the order's shard alone.
func TestChargebacksInFourShards(t *testing.T) {
	if reconcile.ShardOf("CB1", 4) == reconcile.ShardOf("CR1", 4) || reconcile.ShardOf("CB2", 4) == reconcile.ShardOf("CR2", 4) ||
		reconcile.ShardOf("CB3", 4) == 0 {
		t.Fatal("the data no longer splits its cases across shards: change its numbers")
	}
	wholeDB, wholeDSN := dbWith(t, chargebackDB)
	shardDB, shardDSN := dbWith(t, chargebackDB)
	c := newCLI(nil)
	for _, night := range []struct{ date, body string }{{"2026-11-28", chargebackNight1}, {"2026-11-29", chargebackNight2}} {
		cardDay(t, c, wholeDSN, night.date, night.body)
		for i := range 4 {
			cardDay(t, c, shardDSN, night.date, night.body, "--shard", fmt.Sprintf("%d/4", i))
		}
	}
	whole, shards := dump(t, wholeDB), dump(t, shardDB)
	if whole != shards {
		t.Errorf("findings differ\nshards:\n%s\nwhole:\n%s", shards, whole)
	}
	for _, want := range []string{"chargeback|CB1|", "chargeback|CB2|", "chargeback|CB3|", "over_refund|CB1|", "over_refund|CB2|", "dispute_mismatch|CB4|"} {
		if strings.Count(shards, want) != 1 {
			t.Errorf("shards found %q %d times, want once:\n%s", want, strings.Count(shards, want), shards)
		}
	}
	if a, b := disputeStanding(t, wholeDB), disputeStanding(t, shardDB); a != b {
		t.Errorf("standing: whole %s, shards %s", a, b)
	}
}
