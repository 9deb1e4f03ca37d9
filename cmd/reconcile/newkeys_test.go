package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"reconcile"
)

// newKeysDB is two nights of a shop whose money moved twice under new
// keys. Night 1 (2026-11-28): order XK1 (100.00) refunded twice in full as
// XR1 and XR2; customer 9 paid 50.00 twice, 40 ms apart, as XK2 and XK3;
// order XK5 refunded in full once (XR5a); customer 11's order XK6 paid at
// 23:59:58; order XK9 refunded in full by us (XR9a) and once more at the
// channel alone (XR9d); customer 21 paid 33.00 twice a second apart (XM1,
// XM2), both in the file, our record of XM1 written just after midnight.
// Night 2: XK5 refunded in full again (XR5b); customer 11 paid
// again at 00:00:01 as XK7; XK8 refunded 50.00 twice, 30 minutes apart.
const newKeysDB = `
INSERT INTO orders (order_no, user_id, amount_minor, currency, status, channel, channel_txn_id, created_at, paid_at) VALUES
  ('XK1', 1,  10000, 'CNY', 'REFUNDED', 'shop', 'T1', '2026-11-27 09:00:00+00', '2026-11-27 09:00:01+00'),
  ('XK2', 9,   5000, 'CNY', 'PAID',     'shop', 'T2', '2026-11-28 12:00:00.000+00', '2026-11-28 12:00:01+00'),
  ('XK3', 9,   5000, 'CNY', 'PAID',     'shop', 'T3', '2026-11-28 12:00:00.040+00', '2026-11-28 12:00:02+00'),
  ('XK5', 5,  10000, 'CNY', 'REFUNDED', 'shop', 'T5', '2026-11-26 09:00:00+00', '2026-11-26 09:00:01+00'),
  ('XK6', 11,  7700, 'CNY', 'PAID',     'shop', 'T6', '2026-11-28 23:59:58+00', '2026-11-28 23:59:59+00'),
  ('XK7', 11,  7700, 'CNY', 'PAID',     'shop', 'T7', '2026-11-29 00:00:01+00', '2026-11-29 00:00:02+00'),
  ('XK8', 8,  10000, 'CNY', 'REFUNDED', 'shop', 'T8', '2026-11-20 09:00:00+00', '2026-11-20 09:00:01+00'),
  ('XK9', 19, 10000, 'CNY', 'REFUNDED', 'shop', 'T9', '2026-11-20 09:00:00+00', '2026-11-20 09:00:01+00'),
  ('XM1', 21,  3300, 'CNY', 'PAID',     'shop', 'TM1', '2026-11-28 23:59:50+00', '2026-11-29 00:00:02+00'),
  ('XM2', 21,  3300, 'CNY', 'PAID',     'shop', 'TM2', '2026-11-28 23:59:51+00', '2026-11-28 23:59:52+00');
INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, channel_refund_id, refunded_at) VALUES
  ('XR1',  'XK1', 10000, 'CNY', 'SUCCEEDED', 'shop', 'RT1',  '2026-11-28 10:00:00+00'),
  ('XR2',  'XK1', 10000, 'CNY', 'SUCCEEDED', 'shop', 'RT2',  '2026-11-28 10:05:00+00'),
  ('XR5a', 'XK5', 10000, 'CNY', 'SUCCEEDED', 'shop', 'RT5a', '2026-11-28 11:00:00+00'),
  ('XR5b', 'XK5', 10000, 'CNY', 'SUCCEEDED', 'shop', 'RT5b', '2026-11-29 11:00:00+00'),
  ('XR8a', 'XK8',  5000, 'CNY', 'SUCCEEDED', 'shop', 'RT8a', '2026-11-29 09:00:00+00'),
  ('XR8b', 'XK8',  5000, 'CNY', 'SUCCEEDED', 'shop', 'RT8b', '2026-11-29 09:30:00+00'),
  ('XR9a', 'XK9', 10000, 'CNY', 'SUCCEEDED', 'shop', 'RT9a', '2026-11-28 12:00:00+00');`

const newKeysNight1 = `refund,XK1,XR1,RT1,100.00,CNY,2026-11-28T10:00:00Z
refund,XK1,XR2,RT2,100.00,CNY,2026-11-28T10:05:00Z
payment,XK2,,T2,50.00,CNY,2026-11-28T12:00:01Z
payment,XK3,,T3,50.00,CNY,2026-11-28T12:00:02Z
refund,XK5,XR5a,RT5a,100.00,CNY,2026-11-28T11:00:00Z
payment,XK6,,T6,77.00,CNY,2026-11-28T23:59:59Z
refund,XK9,XR9a,RT9a,100.00,CNY,2026-11-28T12:00:00Z
refund,XK9,XR9d,RT9d,100.00,CNY,2026-11-28T12:30:00Z
payment,XM1,,TM1,33.00,CNY,2026-11-28T23:59:51Z
payment,XM2,,TM2,33.00,CNY,2026-11-28T23:59:52Z
`

const newKeysNight2 = `refund,XK5,XR5b,RT5b,100.00,CNY,2026-11-29T11:00:00Z
payment,XK7,,T7,77.00,CNY,2026-11-29T00:00:02Z
refund,XK8,XR8a,RT8a,50.00,CNY,2026-11-29T09:00:00Z
refund,XK8,XR8b,RT8b,50.00,CNY,2026-11-29T09:30:00Z
`

// TestMoneyMovedTwiceUnderNewKeys runs the shop's two nights on
// PostgreSQL, then again (forced, and the same files once more), and
// approves what review shows.
func TestMoneyMovedTwiceUnderNewKeys(t *testing.T) {
	db, dsn := dbWith(t, newKeysDB)
	c := newCLI(nil)
	ctx := context.Background()

	_, s1 := checkNight(t, c, dsn, "2026-11-28", newKeysNight1,
		map[string]int{"matched": 9, "over_refund": 2, "missing_local": 1, "suspected_duplicate_payment": 2, "suspected_duplicate_refund": 0},
		"over_refund|XK1|XR2|RT2|",
		"Order XK1 was paid 100.00 CNY and has been refunded 200.00 CNY in 2 refunds: 100.00 CNY more than was paid.",
		"refund XR1, channel id RT1, 100.00 CNY, 2026-11-28 10:00:00, both sides; refund XR2, channel id RT2, 100.00 CNY, 2026-11-28 10:05:00, both sides",
		"suspected_duplicate_payment|XK3||T3|T2|",
		"Customer 9 paid 50.00 CNY twice, 2 orders 40 ms apart: XK2 and then XK3")
	out2, s2 := checkNight(t, c, dsn, "2026-11-29", newKeysNight2,
		map[string]int{"matched": 4, "over_refund": 1, "suspected_duplicate_payment": 1, "suspected_duplicate_refund": 1},
		"over_refund|XK5|XR5b|RT5b|",
		"suspected_duplicate_payment|XK7||T7|T6|",
		"2 orders 3 s apart: XK6 and then XK7",
		"suspected_duplicate_refund|XK8|XR8b|RT8b|RT8a|",
		"settled 30 min after refund XR8a")
	if s1.AutoReversed+s2.AutoReversed != 0 {
		t.Errorf("auto reversed %d and %d: none of these is automatic", s1.AutoReversed, s2.AutoReversed)
	}

	// Both nights again: the same files are replays, a forced run finds
	// the same, and each finding stands once among the current runs.
	shopDay(t, c, dsn, "2026-11-28", newKeysNight1)
	shopDay(t, c, dsn, "2026-11-28", newKeysNight1, "--force")
	out2 = shopDay(t, c, dsn, "2026-11-29", newKeysNight2, "--force")
	if again := readSummary(t, out2); again.RunID == s2.RunID || !maps.Equal(again.Counts, s2.Counts) {
		t.Errorf("night 2 forced: run %s counts %v; want a new run with %v", again.RunID, again.Counts, s2.Counts)
	}
	var current int
	db.Pool().QueryRow(ctx, `
SELECT count(*) FROM findings f JOIN runs r ON r.id = f.run_id
 WHERE r.status = 'SUCCEEDED' AND r.superseded_by IS NULL
   AND f.category IN ('over_refund', 'suspected_duplicate_refund', 'suspected_duplicate_payment')`).Scan(&current)
	if current != 7 {
		t.Errorf("current findings of the new categories: got %d, want 7 (4 on night 1, 3 on night 2)", current)
	}

	// Approve everything on night 2's workbook: the suspected ones are
	// reversed as a duplicate would be, the over_refund only recorded.
	book := out2 + "/review-shop-2026-11-29.xlsx"
	header, lines := reviewLines(t, book)
	set := map[int][3]string{}
	for _, l := range lines {
		set[l.row] = [3]string{"approve", "alice", ""}
	}
	approved := writeDecisions(t, book, header, set)
	if code := c.run(t, "review", "import", approved, "--dsn", dsn); code != ExitOK {
		t.Fatalf("import: exit %d\n%s\n%s", code, c.out, c.errb)
	}
	keys := journalKeys(t, db)
	if want := []string{"reversal/shop/RT8b", "reversal/shop/T7"}; !slices.Equal(keys, want) {
		t.Errorf("journals: got %q, want %q", keys, want)
	}
	if code := c.run(t, "review", "import", approved, "--dsn", dsn); code != ExitOK {
		t.Fatalf("import again: exit %d\n%s\n%s", code, c.out, c.errb)
	}
	if again := journalKeys(t, db); !slices.Equal(again, keys) {
		t.Errorf("journals after importing again: got %q, want still %q", again, keys)
	}
	var states []string
	rows, _ := db.Pool().Query(ctx, `SELECT category || '=' || state FROM findings
 WHERE run_id = $1 AND category IN ('over_refund', 'suspected_duplicate_refund', 'suspected_duplicate_payment') ORDER BY category`, readSummary(t, out2).RunID)
	for rows.Next() {
		var s string
		rows.Scan(&s)
		states = append(states, s)
	}
	rows.Close()
	if want := []string{"over_refund=APPROVED", "suspected_duplicate_payment=APPROVED", "suspected_duplicate_refund=APPROVED"}; !slices.Equal(states, want) {
		t.Errorf("states: got %q, want %q", states, want)
	}
}

// checkNight runs the shop's night and checks its counts and what its
// Review sheet says.
func checkNight(t *testing.T, c *cli, dsn, date, body string, counts map[string]int, review ...string) (string, summaryFile) {
	t.Helper()
	out := shopDay(t, c, dsn, date, body)
	s := readSummary(t, out)
	for cat, n := range counts {
		if s.Counts[cat] != n {
			t.Errorf("%s %s: got %d, want %d (counts %v)", date, cat, s.Counts[cat], n, s.Counts)
		}
	}
	sheet := sheetText(t, out, date, "Review")
	for _, want := range review {
		if !strings.Contains(sheet, want) {
			t.Errorf("%s's Review sheet lacks %q:\n%s", date, want, sheet)
		}
	}
	return out, s
}

// TestRefundsWithoutOurNumbers: real Stripe reports often lack the refund
// metadata column, and real Adyen reports repeat the payment's reference
// on every refund of the order. Such refunds are matched by the channel's
// refund id within their order: two partial refunds stay two, and a
// refund nothing links (one made at the channel by hand) is reported and
// counted in its order's refunds.
func TestRefundsWithoutOurNumbers(t *testing.T) {
	tests := []struct {
		name, format, file string
		sql                string
		want               map[string]int
	}{
		{
			name: "stripe", format: "stripe",
			file: `automatic_payout_id,balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,description,payment_metadata[order_id]
po_1,txn_1,2026-11-28 09:00:00,usd,100.00,3.20,96.80,charge,ch_1,Order S1,S1
po_1,txn_2,2026-11-28 10:00:00,usd,-30.00,0.00,-30.00,refund,re_1,REFUND FOR CHARGE (Order S1),S1
po_1,txn_3,2026-11-28 11:00:00,usd,-70.00,0.00,-70.00,refund,re_2,REFUND FOR CHARGE (Order S1),S1
po_1,txn_4,2026-11-28 12:00:00,usd,-100.00,0.00,-100.00,refund,re_3,REFUND FOR CHARGE (Order S1),S1
po_1,txn_5,2026-11-28 12:30:00,usd,103.20,0.00,103.20,payout,po_1,STRIPE PAYOUT,
`,
			sql: `
INSERT INTO orders (order_no, amount_minor, currency, status, channel, channel_txn_id, paid_at) VALUES
  ('S1', 10000, 'USD', 'REFUNDED', 'shop', 'ch_1', '2026-11-28 09:00:00+00');
INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, channel_refund_id, refunded_at) VALUES
  ('SR1', 'S1', 3000, 'USD', 'SUCCEEDED', 'shop', 're_1', '2026-11-28 10:00:00+00'),
  ('SR2', 'S1', 7000, 'USD', 'SUCCEEDED', 'shop', 're_2', '2026-11-28 11:00:00+00');`,
			want: map[string]int{"matched": 3, "unrecognized": 1, "over_refund": 1, "suspected_duplicate_refund": 0, "missing_channel": 0},
		},
		{
			name: "adyen", format: "adyen",
			file: `Company Account,Merchant Account,Psp Reference,Merchant Reference,Payment Method,Creation Date,TimeZone,Type,Modification Reference,Gross Currency,Gross Debit (GC),Gross Credit (GC),Exchange Rate,Net Currency,Net Debit (NC),Net Credit (NC),Commission (NC),Markup (NC),Scheme Fees (NC),Interchange (NC),Payment Method Variant,Modification Merchant Reference,Batch Number,Reserved4,Reserved5,Reserved6,Reserved7,Reserved8,Reserved9,Reserved10
Acme,AcmeShop,PSP1,A1,visa,2026-11-28 09:00:00,UTC,Settled,CAP1,EUR,,100,1,EUR,,100,,,,,visa,<auto>,7,,,,,,,
Acme,AcmeShop,PSP1,A1,visa,2026-11-28 10:00:00,UTC,Refunded,REF1,EUR,30,,1,EUR,30,,,,,,visa,A1,7,,,,,,,
Acme,AcmeShop,PSP1,A1,visa,2026-11-28 11:00:00,UTC,Refunded,REF2,EUR,70,,1,EUR,70,,,,,,visa,A1,7,,,,,,,
Acme,AcmeShop,PSP2,A2,visa,2026-11-28 12:00:00,UTC,Settled,CAP2,EUR,,50,1,EUR,,50,,,,,visa,<auto>,7,,,,,,,
Acme,AcmeShop,,,,2026-11-29 00:46:38,UTC,MerchantPayout,"TX000000007XT batch 7, AcmeShop",,,,,EUR,50,,,,,,,,7,,,,,,,
`,
			sql: `
INSERT INTO orders (order_no, amount_minor, currency, status, channel, channel_txn_id, paid_at) VALUES
  ('A1', 10000, 'EUR', 'REFUNDED', 'shop', 'CAP1', '2026-11-28 09:00:00+00'),
  ('A2',  5000, 'EUR', 'PAID',     'shop', 'CAP2', '2026-11-28 12:00:00+00');
INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, channel_refund_id, refunded_at) VALUES
  ('AR1', 'A1', 3000, 'EUR', 'SUCCEEDED', 'shop', 'REF1', '2026-11-28 10:00:00+00'),
  ('AR2', 'A1', 7000, 'EUR', 'SUCCEEDED', 'shop', 'REF2', '2026-11-28 11:00:00+00');`,
			want: map[string]int{"matched": 4, "unrecognized": 0, "over_refund": 0, "suspected_duplicate_refund": 0,
				"duplicate_refund": 0, "missing_channel": 0, "missing_local": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, dsn := dbWith(t, tt.sql)
			file := t.TempDir() + "/" + tt.name + ".csv"
			if err := os.WriteFile(file, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			c := newCLI(nil)
			out := t.TempDir()
			if code := c.run(t, "run", "--date", "2026-11-28", "--channel", "shop", "--format", tt.format, "--tz", "UTC",
				"--file", file, "--dsn", dsn, "--out", out); code != ExitOK {
				t.Fatalf("exit %d\n%s", code, c.errb)
			}
			s := readSummary(t, out)
			for cat, n := range tt.want {
				if s.Counts[cat] != n {
					t.Errorf("%s: got %d, want %d (counts %v)", cat, s.Counts[cat], n, s.Counts)
				}
			}
			if tt.name == "stripe" {
				review := sheetText(t, out, "2026-11-28", "Review")
				for _, want := range []string{"no refund of ours carries its channel refund id \"re_3\"", "refunded 200.00 USD in 3 refunds"} {
					if !strings.Contains(review, want) {
						t.Errorf("Review lacks %q:\n%s", want, review)
					}
				}
			}
		})
	}
}

// TestNewKeysInFourShards: the two nights run as four shards give exactly
// the findings of the run of the whole, although an order's refunds and a
// customer's orders fall in different shards.
func TestNewKeysInFourShards(t *testing.T) {
	split := func(keys ...string) bool {
		for _, k := range keys[1:] {
			if reconcile.ShardOf(k, 4) != reconcile.ShardOf(keys[0], 4) {
				return true
			}
		}
		return false
	}
	if !split("XK1", "XR1", "XR2") || !split("XK9", "XR9d") || !split("21", "XM1") || !split("XK2", "XK3") || !split("XK6", "XK7") ||
		reconcile.ShardOf("9", 4) == reconcile.ShardOf("XK3", 4) && reconcile.ShardOf("9", 4) == reconcile.ShardOf("XK2", 4) {
		t.Fatal("the data no longer splits its cases across shards: change its numbers")
	}
	wholeDB, wholeDSN := dbWith(t, newKeysDB)
	shardDB, shardDSN := dbWith(t, newKeysDB)
	c := newCLI(nil)
	for _, night := range []struct{ date, body string }{{"2026-11-28", newKeysNight1}, {"2026-11-29", newKeysNight2}} {
		shopDay(t, c, wholeDSN, night.date, night.body)
		for i := range 4 {
			shopDay(t, c, shardDSN, night.date, night.body, "--shard", fmt.Sprintf("%d/4", i))
		}
	}
	whole, shards := dump(t, wholeDB), dump(t, shardDB)
	if whole != shards {
		t.Errorf("findings differ\nshards:\n%s\nwhole:\n%s", shards, whole)
	}
	for _, want := range []string{"over_refund|XK1|XR2|RT2|", "over_refund|XK5|XR5b|", "suspected_duplicate_payment|XK3||T3|",
		"suspected_duplicate_payment|XK7||T7|", "suspected_duplicate_refund|XK8|XR8b|RT8b|", "over_refund|XK9|XR9d|RT9d|",
		"suspected_duplicate_payment|XM2||TM2|"} {
		if strings.Count(shards, want) != 1 {
			t.Errorf("shards found %q %d times, want once:\n%s", want, strings.Count(shards, want), shards)
		}
	}
}

// TestOneRefundPastWhatWasPaid: a single refund of the day larger than
// its order is over_refund whichever way the run learns of it: the order
// in tonight's file (the matcher holds its record), the order paid on an
// earlier day (asked about by name), or the refund missing from the file.
// A single refund within its order is a plain match.
func TestOneRefundPastWhatWasPaid(t *testing.T) {
	_, dsn := dbWith(t, `
INSERT INTO orders (order_no, user_id, amount_minor, currency, status, channel, channel_txn_id, created_at, paid_at) VALUES
  ('YL1', 31, 5000, 'CNY', 'REFUNDED', 'shop', 'U1', '2026-11-28 08:00:00+00', '2026-11-28 08:00:01+00'),
  ('YL2', 32, 5000, 'CNY', 'REFUNDED', 'shop', 'U2', '2026-11-20 08:00:00+00', '2026-11-20 08:00:01+00'),
  ('YL3', 33, 5000, 'CNY', 'REFUNDED', 'shop', 'U3', '2026-11-20 08:00:00+00', '2026-11-20 08:00:01+00'),
  ('YL4', 34, 5000, 'CNY', 'REFUNDING', 'shop', 'U4', '2026-11-28 08:00:00+00', '2026-11-28 08:00:02+00');
INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, channel_refund_id, refunded_at) VALUES
  ('YR1', 'YL1', 8000, 'CNY', 'SUCCEEDED', 'shop', 'RU1', '2026-11-28 10:00:00+00'),
  ('YR2', 'YL2', 8000, 'CNY', 'SUCCEEDED', 'shop', 'RU2', '2026-11-28 10:00:00+00'),
  ('YR3', 'YL3', 8000, 'CNY', 'SUCCEEDED', 'shop', 'RU3', '2026-11-28 10:00:00+00'),
  ('YR4', 'YL4', 3000, 'CNY', 'SUCCEEDED', 'shop', 'RU4', '2026-11-28 10:00:00+00');`)
	c := newCLI(nil)
	checkNight(t, c, dsn, "2026-11-28", `payment,YL1,,U1,50.00,CNY,2026-11-28T08:00:01Z
refund,YL1,YR1,RU1,80.00,CNY,2026-11-28T10:00:00Z
refund,YL2,YR2,RU2,80.00,CNY,2026-11-28T10:00:00Z
payment,YL4,,U4,50.00,CNY,2026-11-28T08:00:02Z
refund,YL4,YR4,RU4,30.00,CNY,2026-11-28T10:00:00Z
`,
		map[string]int{"matched": 5, "over_refund": 3, "missing_channel": 1},
		"over_refund|YL1|YR1|RU1|", "over_refund|YL2|YR2|RU2|", "over_refund|YL3|YR3|",
		"Order YL1 was paid 50.00 CNY and has been refunded 80.00 CNY in 1 refund: 30.00 CNY more than was paid.")
}
