package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"reconcile"
	"reconcile/ledger/ledgertest"
)

// TestOwnTablesThroughViews follows the README: the job gets a schema of
// its own, and its reference tables there are replaced by views over a
// deployment's differently shaped tables.
func TestOwnTablesThroughViews(t *testing.T) {
	ctx := context.Background()
	dsn := ledgertest.EmptyDB(t)
	schema := "recon_" + reconcile.NewRunID()[:8]
	shop := "shop_" + reconcile.NewRunID()[:8]
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	exec(`CREATE SCHEMA ` + shop + `;
CREATE TABLE ` + shop + `.orders (number text PRIMARY KEY, total_cents bigint, currency text, state text,
  psp text, psp_reference text, captured_at timestamptz);
CREATE TABLE ` + shop + `.refunds (number text PRIMARY KEY, order_number text, cents bigint, currency text,
  state text, psp text, psp_reference text, done_at timestamptz);
INSERT INTO ` + shop + `.orders VALUES
  ('O1', 1000, 'USD', 'captured', 'stripe', 'ch_1', '2026-11-28 10:00:00+00'),
  ('O2',  500, 'USD', 'new',      'stripe', NULL,   NULL),
  ('O3',  700, 'USD', 'captured', 'stripe', 'ch_3', '2026-11-28 12:00:00+00');
INSERT INTO ` + shop + `.refunds VALUES ('R1', 'O1', 200, 'USD', 'done', 'stripe', 're_1', '2026-11-28 11:00:00+00');
CREATE SCHEMA ` + schema)

	c := newCLI(nil)
	jobDSN := ledgertest.WithParam(dsn, "search_path", schema)
	if code := c.run(t, "migrate", "--dsn", jobDSN); code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s", code, c.errb)
	}
	exec(`DROP TABLE ` + schema + `.refunds, ` + schema + `.orders, ` + schema + `.idempotency_records;
CREATE VIEW ` + schema + `.orders AS
  SELECT number AS order_no, total_cents AS amount_minor, currency,
         CASE state WHEN 'captured' THEN 'PAID' WHEN 'new' THEN 'PENDING' ELSE 'CANCELLED' END AS status,
         psp AS channel, psp_reference AS channel_txn_id, captured_at AS paid_at
    FROM ` + shop + `.orders;
CREATE VIEW ` + schema + `.refunds AS
  SELECT number AS refund_no, order_number AS order_no, cents AS amount_minor, currency,
         CASE state WHEN 'done' THEN 'SUCCEEDED' WHEN 'failed' THEN 'FAILED' ELSE 'PENDING' END AS status,
         psp AS channel, psp_reference AS channel_refund_id, done_at AS refunded_at
    FROM ` + shop + `.refunds;
CREATE VIEW ` + schema + `.idempotency_records AS
  SELECT NULL::text AS scope, NULL::text AS idem_key, NULL::text AS status WHERE false`)

	file := filepath.Join(t.TempDir(), "stripe.csv")
	os.WriteFile(file, []byte(`type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at
payment,O1,,ch_1,10.00,USD,2026-11-28T10:00:00Z
payment,O2,,ch_2,5.00,USD,2026-11-28T10:30:00Z
refund,O1,R1,re_1,2.00,USD,2026-11-28T11:00:00Z
`), 0o644)
	out := t.TempDir()
	if code := c.run(t, "run", "--date", "2026-11-28", "--channel", "stripe", "--format", "csv",
		"--file", file, "--dsn", jobDSN, "--out", out); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, c.errb)
	}
	got := readSummary(t, out).Counts
	want := map[string]int{"matched": 2, "status_mismatch": 1, "missing_channel": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("counts[%s]: got %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	var runs int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.runs`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != 1 {
		t.Errorf("runs in %s: got %d, want 1", schema, runs)
	}

	// The views give no customer: the run above went without the check of
	// a payment repeated under another order, and check-config says so.
	cfg := writeConfig(t, map[string]any{"out_dir": t.TempDir(), "channels": []map[string]any{
		{"name": "stripe", "format": "csv", "path": file}}})
	c.run(t, "check-config", "--config", cfg, "--dsn", jobDSN)
	if want := "suspected_duplicate_payment off: the local orders have no user_id and created_at"; !strings.Contains(c.out.String(), want) {
		t.Errorf("check-config does not say %q:\n%s", want, c.out)
	}
}
