package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
)

// The SQL baseline is what a team would write instead of the job: load
// the canonical CSV into a staging table as text, and classify with joins.
// It covers one night (no memory of earlier files) and computes counts
// only: no findings, journals or reports are written.
const stagingDDL = `
DROP TABLE IF EXISTS recon_staging;
CREATE UNLOGGED TABLE recon_staging (
    type           text,
    order_no       text,
    refund_no      text,
    channel_txn_id text,
    amount         text,
    currency       text,
    occurred_at    text,
    fee            text,
    status         text
)`

// classifySQL applies the product rules to the staged file: $1 is the
// channel, $2 and $3 bound the business day, $4 is the start of the
// 30-minute cut-off window (a record settled after it and missing from the
// file is pending, not missing). It returns one row per category with its
// count and how many of its rows are unambiguous duplicates.
const classifySQL = `
WITH ch AS (
    SELECT type AS kind,
           CASE type WHEN 'refund' THEN refund_no ELSE order_no END AS key,
           channel_txn_id AS txn,
           (amount::numeric * 100)::bigint AS amount,  -- CNY: 2 decimals
           currency,
           occurred_at::timestamptz AS at,
           CASE upper(coalesce(nullif(status, ''), 'SUCCESS'))
                WHEN 'SUCCESS' THEN 'success'
                WHEN 'PROCESSING' THEN 'processing'
                WHEN 'PENDING' THEN 'processing'
                ELSE 'failed' END AS outcome
      FROM recon_staging
),
ranked AS (
    SELECT ch.*, row_number() OVER (PARTITION BY kind, key ORDER BY at, txn) AS rn
      FROM ch
     WHERE kind IN ('payment', 'refund')
),
grp AS (
    SELECT kind, key,
           min(amount) = max(amount) AND min(currency) = max(currency) AS same_amount,
           count(DISTINCT txn) = count(*) AND bool_and(txn <> '') AS distinct_ids,
           bool_and(outcome = 'success') AS all_success
      FROM ranked
     GROUP BY kind, key
),
loc AS (
    SELECT 'payment' AS kind, o.order_no AS key, o.amount_minor AS amount, o.currency::text AS currency,
           CASE WHEN o.status IN ('PAID', 'SHIPPED', 'REFUNDING', 'REFUNDED') THEN 'success'
                WHEN o.status = 'PENDING' THEN 'processing'
                ELSE 'failed' END AS outcome,
           i.status AS idem
      FROM orders o
      LEFT JOIN idempotency_records i ON i.scope = 'payment' AND i.idem_key = o.order_no
    UNION ALL
    SELECT 'refund', r.refund_no, r.amount_minor, r.currency::text,
           CASE r.status WHEN 'SUCCEEDED' THEN 'success' WHEN 'PENDING' THEN 'processing' ELSE 'failed' END,
           i.status
      FROM refunds r
      LEFT JOIN idempotency_records i ON i.scope = 'refund' AND i.idem_key = r.refund_no
),
orig AS (
    SELECT r.kind, r.key, r.amount, r.currency, r.outcome,
           l.key AS local_key, l.amount AS local_amount, l.currency AS local_currency,
           l.outcome AS local_outcome, l.idem
      FROM ranked r
      LEFT JOIN loc l ON l.kind = r.kind AND l.key = r.key
     WHERE r.rn = 1
),
classified AS (
    -- Each group's original (earliest row) against the local record of its key.
    SELECT CASE WHEN o.local_key IS NULL THEN 'missing_local'
                WHEN o.local_amount <> o.amount OR o.local_currency <> o.currency THEN 'amount_mismatch'
                WHEN o.local_outcome <> o.outcome THEN 'status_mismatch'
                ELSE 'matched' END AS category,
           false AS auto_reverse
      FROM orig o
    UNION ALL
    -- Every later row of a group is a duplicate; unambiguous only when the
    -- group agrees on the amount, its ids differ, every row completed, and
    -- the local record is settled for that amount with no idempotency
    -- record in flight or failed.
    SELECT CASE d.kind WHEN 'refund' THEN 'duplicate_refund' ELSE 'duplicate_payment' END,
           coalesce(g.same_amount AND g.distinct_ids AND g.all_success
                    AND o.local_outcome = 'success'
                    AND o.local_amount = o.amount AND o.local_currency = o.currency
                    AND coalesce(o.idem, '') NOT IN ('IN_PROGRESS', 'FAILED'), false)
      FROM ranked d
      JOIN grp g ON g.kind = d.kind AND g.key = d.key
      JOIN orig o ON o.kind = d.kind AND o.key = d.key
     WHERE d.rn > 1
    UNION ALL
    -- This channel's settled records of the day without a row in the file.
    SELECT CASE WHEN o.paid_at >= $4 THEN 'pending' ELSE 'missing_channel' END, false
      FROM orders o
     WHERE o.channel = $1 AND o.paid_at >= $2 AND o.paid_at < $3
       AND o.status IN ('PAID', 'SHIPPED', 'REFUNDING', 'REFUNDED')
       AND NOT EXISTS (SELECT 1 FROM ch WHERE ch.kind = 'payment' AND ch.key = o.order_no)
    UNION ALL
    SELECT CASE WHEN r.refunded_at >= $4 THEN 'pending' ELSE 'missing_channel' END, false
      FROM refunds r
     WHERE r.channel = $1 AND r.refunded_at >= $2 AND r.refunded_at < $3
       AND r.status = 'SUCCEEDED'
       AND NOT EXISTS (SELECT 1 FROM ch WHERE ch.kind = 'refund' AND ch.key = r.refund_no)
    UNION ALL
    -- A chargeback is told as one (the generated data has no reversals);
    -- one of an order refunded in full has returned its money twice.
    SELECT 'chargeback', false FROM ch WHERE kind = 'chargeback'
    UNION ALL
    SELECT 'over_refund', false
      FROM ch c JOIN orders o ON o.order_no = c.key
     WHERE c.kind = 'chargeback'
       AND (SELECT coalesce(sum(r.amount_minor), 0) FROM refunds r
             WHERE r.order_no = o.order_no AND r.status = 'SUCCEEDED') + c.amount > o.amount_minor
    UNION ALL
    SELECT 'unrecognized', false FROM ch WHERE kind NOT IN ('payment', 'refund', 'chargeback')
)
SELECT category, count(*), count(*) FILTER (WHERE auto_reverse)
  FROM classified
 GROUP BY category`

// BaselineResult is the SQL baseline's outcome and timings.
type BaselineResult struct {
	Copy, Classify time.Duration
	Rows           int64
	Got            Expected
}

// Total is the baseline's wall time.
func (b BaselineResult) Total() time.Duration { return b.Copy + b.Classify }

// RunBaseline stages csvPath through COPY on conn (whose search path
// holds the local tables of channel) and classifies it. The copy phase
// includes creating the staging table and analyzing it, as a script that
// joins on it would.
func RunBaseline(ctx context.Context, conn *pgx.Conn, csvPath, channel string) (BaselineResult, error) {
	var res BaselineResult
	f, err := os.Open(csvPath)
	if err != nil {
		return res, err
	}
	defer f.Close()

	start := time.Now()
	if _, err := conn.Exec(ctx, stagingDDL); err != nil {
		return res, fmt.Errorf("baseline: staging table: %w", err)
	}
	tag, err := conn.PgConn().CopyFrom(ctx, f, "COPY recon_staging FROM STDIN WITH (FORMAT csv, HEADER true)")
	if err != nil {
		return res, fmt.Errorf("baseline: copy %s: %w", csvPath, err)
	}
	res.Rows = tag.RowsAffected()
	if _, err := conn.Exec(ctx, "ANALYZE recon_staging"); err != nil {
		return res, fmt.Errorf("baseline: analyze: %w", err)
	}
	res.Copy = time.Since(start)

	start = time.Now()
	dayEnd := businessDate.AddDate(0, 0, 1)
	rows, err := conn.Query(ctx, classifySQL, channel, businessDate, dayEnd, dayEnd.Add(-30*time.Minute))
	if err != nil {
		return res, fmt.Errorf("baseline: classify: %w", err)
	}
	res.Got = Expected{Counts: map[reconcile.Category]int{}}
	for rows.Next() {
		var cat string
		var n, auto int
		if err := rows.Scan(&cat, &n, &auto); err != nil {
			return res, fmt.Errorf("baseline: classify: %w", err)
		}
		res.Got.Counts[reconcile.Category(cat)] = n
		res.Got.AutoReversed += auto
	}
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("baseline: classify: %w", err)
	}
	res.Classify = time.Since(start)
	return res, nil
}
