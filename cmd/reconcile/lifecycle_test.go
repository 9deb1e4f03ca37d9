package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/ledger/ledgertest"
)

const shopHeader = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n"

// shopDay runs the CLI for channel shop on one date with the given CSV
// body, and returns the out directory.
func shopDay(t *testing.T, c *cli, dsn, date, body string, extra ...string) string {
	t.Helper()
	return shopFile(t, c, dsn, shopHeader, date, body, extra...)
}

// shopFile is shopDay with the CSV's header of choice.
func shopFile(t *testing.T, c *cli, dsn, header, date, body string, extra ...string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "shop-"+date+".csv")
	if err := os.WriteFile(file, []byte(header+body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	args := append([]string{"run", "--date", date, "--channel", "shop", "--format", "csv", "--tz", "UTC",
		"--file", file, "--dsn", dsn, "--out", out}, extra...)
	if code := c.run(t, args...); code != ExitOK {
		t.Fatalf("%s: exit %d\n%s", date, code, c.errb)
	}
	return out
}

func categoryNames() []string {
	var out []string
	for _, c := range reconcile.Categories {
		out = append(out, string(c))
	}
	return out
}

func sheetText(t *testing.T, out, date, sheet string) string {
	t.Helper()
	f, err := excelize.OpenFile(filepath.Join(out, "review-shop-"+date+".xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, "|") + "\n")
	}
	return b.String()
}

// TestNightsInARow follows one channel over three nights: a record paid at
// 23:55 and settled in the next day's file never reaches review; a refund
// retried the next day after a crash is a duplicate of the earlier day's
// row and is reversed; a corrected file supersedes its date's run, and the
// duplicate it no longer carries is flagged, not reversed back; a finding
// still open after three days is listed again in the next alert.
func TestNightsInARow(t *testing.T) {
	db, dsn := dbWith(t, `
INSERT INTO orders (order_no, amount_minor, currency, status, channel, channel_txn_id, paid_at) VALUES
  ('A', 5000, 'USD', 'REFUNDED', 'shop', 'TA', '2026-11-27 10:00:00+00'),
  ('B', 2500, 'USD', 'PAID',     'shop', 'TB', '2026-11-27 23:55:00+00');
INSERT INTO refunds (refund_no, order_no, amount_minor, currency, status, channel, channel_refund_id, refunded_at) VALUES
  ('R1', 'A', 5000, 'USD', 'SUCCEEDED', 'shop', 'RX', '2026-11-27 12:00:00+00');
INSERT INTO idempotency_records (scope, idem_key, request_hash, status) VALUES ('refund', 'R1', 'h', 'DONE');`)
	c := newCLI(nil)
	ctx := context.Background()

	// Night 1: B is not in the file yet.
	out1 := shopDay(t, c, dsn, "2026-11-27",
		"payment,A,,TA,50.00,USD,2026-11-27T10:00:00Z\nrefund,A,R1,RX,50.00,USD,2026-11-27T12:00:00Z\n")
	s1 := readSummary(t, out1)
	if s1.Counts["pending"] != 1 || s1.Counts["missing_channel"] != 0 || s1.NeedsReview != 0 {
		t.Errorf("night 1: counts %v, needs review %d; want B pending and nothing to review", s1.Counts, s1.NeedsReview)
	}
	if review, pending := sheetText(t, out1, "2026-11-27", "Review"), sheetText(t, out1, "2026-11-27", "Pending"); strings.Contains(review, "|B|") || !strings.Contains(pending, "|B|") {
		t.Errorf("night 1: B must be on the Pending sheet only\nReview:\n%sPending:\n%s", review, pending)
	}

	// Night 2: B arrives; R1 was paid out again under a new id after a crash.
	out2 := shopDay(t, c, dsn, "2026-11-28",
		"payment,B,,TB,25.00,USD,2026-11-28T00:02:00Z\nrefund,A,R1,RY,50.00,USD,2026-11-28T08:00:00Z\n")
	s2 := readSummary(t, out2)
	if s2.Counts["matched"] != 1 || s2.Counts["duplicate_refund"] != 1 || s2.AutoReversed != 1 || s2.NeedsReview != 0 {
		t.Errorf("night 2: counts %v, auto %d, review %d; want B matched and R1's retry reversed", s2.Counts, s2.AutoReversed, s2.NeedsReview)
	}
	var pendingState string
	db.Pool().QueryRow(ctx, `SELECT state FROM findings WHERE category = 'pending' AND order_no = 'B'`).Scan(&pendingState)
	if pendingState != "RESOLVED" {
		t.Errorf("B's pending finding: got %q, want RESOLVED", pendingState)
	}
	if review := sheetText(t, out2, "2026-11-28", "Review"); strings.Contains(review, "|B|") {
		t.Errorf("night 2: B reached review:\n%s", review)
	}
	journals, _ := ledgertest.Journals(ctx, db)
	if len(journals) != 1 || journals[0].IdempotencyKey != "reversal/shop/RY" {
		t.Fatalf("journals: got %+v, want the reversal of RY", journals)
	}

	// Night 2 again, corrected: the channel withdrew RY.
	out3 := shopDay(t, c, dsn, "2026-11-28", "payment,B,,TB,25.00,USD,2026-11-28T00:02:00Z\n")
	s3 := readSummary(t, out3)
	if s3.RunID == s2.RunID || s3.Counts["duplicate_vanished"] != 1 || s3.NeedsReview != 1 || s3.AutoReversed != 0 {
		t.Errorf("corrected file: run %s (first %s), counts %v; want a new run with RY flagged for review", s3.RunID, s2.RunID, s3.Counts)
	}
	var superseded string
	db.Pool().QueryRow(ctx, `SELECT coalesce(superseded_by, '') FROM runs WHERE id = $1`, s2.RunID).Scan(&superseded)
	if superseded != s3.RunID {
		t.Errorf("first run of the 28th: superseded by %q, want %s", superseded, s3.RunID)
	}
	if n, _ := ledgertest.JournalCount(ctx, db); n != 1 {
		t.Errorf("journals after the corrected file: got %d, want still 1", n)
	}

	// Three days later the flagged finding is still open: the next alert
	// lists it again.
	db.Pool().Exec(ctx, `UPDATE findings SET created_at = now() - interval '4 days' WHERE run_id = $1`, s3.RunID)
	out4 := shopDay(t, c, dsn, "2026-11-29", "")
	if !strings.Contains(c.out.String(), "Still open after 3 days") || !strings.Contains(c.out.String(), "duplicate_vanished · order A · refund R1") {
		t.Errorf("night 3 alert does not list the open finding again:\n%s", c.out)
	}
	// Night 3's Trend sheet: a line per night, the 28th as the corrected
	// file's run counted it, not the superseded first run.
	want := "Business Date|" + strings.Join(categoryNames(), "|") + "\n"
	for _, night := range []struct {
		date string
		s    summaryFile
	}{{"2026-11-27", s1}, {"2026-11-28", s3}, {"2026-11-29", readSummary(t, out4)}} {
		want += night.date
		for _, cat := range categoryNames() {
			want += "|" + strconv.Itoa(night.s.Counts[cat])
		}
		want += "\n"
	}
	if got := sheetText(t, out4, "2026-11-29", "Trend"); !strings.HasPrefix(got, want) {
		t.Errorf("night 3 Trend sheet:\n%s\nwant it to start:\n%s", got, want)
	}
	var n int
	db.Pool().QueryRow(ctx, `SELECT count(*) FROM runs WHERE status = 'RUNNING'`).Scan(&n)
	if n != 0 {
		t.Errorf("runs left RUNNING: %d", n)
	}
}

// TestNextDayRetryInFlight: a payment charged again the next night under
// a new channel id, whose order's payment is still IN_PROGRESS at the
// service, goes to review, not to an automatic reversal. Its order was
// paid just after midnight, so tonight's window holds it without its
// idempotency status, and only the earlier night's memory makes the key a
// case: the status is asked for after the memory is read.
func TestNextDayRetryInFlight(t *testing.T) {
	_, dsn := dbWith(t, `
INSERT INTO orders (order_no, amount_minor, currency, status, channel, channel_txn_id, paid_at) VALUES
  ('P', 4200, 'USD', 'PAID', 'shop', 'TP1', '2026-11-28 00:00:30+00'),
  ('Q', 1000, 'USD', 'PAID', 'shop', 'TQ',  '2026-11-28 09:00:00+00');
INSERT INTO idempotency_records (scope, idem_key, request_hash, status) VALUES ('payment', 'P', 'h', 'IN_PROGRESS');`)
	c := newCLI(nil)
	shopDay(t, c, dsn, "2026-11-27", "payment,P,,TP1,42.00,USD,2026-11-27T23:59:10Z\n")
	out := shopDay(t, c, dsn, "2026-11-28",
		"payment,P,,TP2,42.00,USD,2026-11-28T08:00:00Z\npayment,Q,,TQ,10.00,USD,2026-11-28T09:00:00Z\n")
	s := readSummary(t, out)
	if s.Counts["duplicate_payment"] != 1 || s.AutoReversed != 0 || s.NeedsReview != 1 || s.Counts["matched"] != 1 {
		t.Errorf("counts %v, auto-reversed %d, needs review %d; want P's second charge in review and Q matched", s.Counts, s.AutoReversed, s.NeedsReview)
	}
	if review := sheetText(t, out, "2026-11-28", "Review"); !strings.Contains(review, "IN_PROGRESS") {
		t.Errorf("the review line does not say the payment is in flight:\n%s", review)
	}
}
