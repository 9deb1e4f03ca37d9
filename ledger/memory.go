package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
)

// Rememberer is what reads the memory of earlier nights (a
// *memory.Reader of the matcher), given as the bytes it was stored as:
// its keys meet the nights in passes (Pass), and in a pass, each night's
// filter is read for the range the pass probes (FilterRange) and the
// parts it chooses (Parts) are given in order (Add), each valid until Add
// returns. What the bytes hold is the reader's business.
type Rememberer interface {
	Passes() int
	Pass(p int)
	FilterRange(bits int) (from, to int)
	Parts(bits int, filter []byte) ([]int, error)
	Add(date time.Time, blob []byte) error
}

// MemoryBefore reads the memory of each current successful run of
// channel whose business date is within days before day into r, in each
// pass the nights oldest first. A night remembered before filters existed
// is read whole, in every pass. What the matcher needs to recognise a
// duplicate across nights, and a record already settled by an earlier
// night's file.
func (db *DB) MemoryBefore(ctx context.Context, channel string, day reconcile.BusinessDay, days int, r Rememberer) error {
	type night struct {
		run  string
		date time.Time
		bits *int32 // nil: no filter
	}
	var nights []night
	from := dateOf(day).AddDate(0, 0, -days)
	rows, err := db.pool.Query(ctx, `
SELECT r.id, r.business_date, (SELECT f.bits FROM settled_filters f WHERE f.run_id = r.id)
  FROM runs r
 WHERE `+rememberedSQL+`
 ORDER BY r.business_date, r.id`, channel, from, dateOf(day))
	if err != nil {
		return fmt.Errorf("memory of %s: %w", channel, interpretError(err))
	}
	for rows.Next() {
		var n night
		if err := rows.Scan(&n.run, &n.date, &n.bits); err != nil {
			rows.Close()
			return fmt.Errorf("memory of %s: %w", channel, interpretError(err))
		}
		y, m, d := n.date.Date()
		n.date = time.Date(y, m, d, 0, 0, 0, 0, day.Location)
		nights = append(nights, n)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("memory of %s: %w", channel, interpretError(err))
	}
	if len(nights) == 0 {
		return nil
	}

	// A night's filter is read a pass's range at a time, when its parts
	// are: at ten million rows each filter is 32 MiB.
	for p := range r.Passes() {
		r.Pass(p)
		for _, n := range nights {
			sql, args := `SELECT records FROM settled_keys WHERE run_id = $1 ORDER BY part`, []any{n.run}
			if n.bits != nil {
				parts, err := db.chooseParts(ctx, n.run, int(*n.bits), r)
				if err != nil {
					return fmt.Errorf("memory of %s %s (run %s): %w", channel, n.date.Format(time.DateOnly), n.run, err)
				}
				if len(parts) == 0 {
					continue
				}
				sql = `SELECT records FROM settled_keys WHERE run_id = $1 AND part = ANY($2) ORDER BY part`
				args = append(args, parts)
			}
			if err := db.readRaw(ctx, sql, args, func(v [][]byte) error { return r.Add(n.date, v[0]) }); err != nil {
				return fmt.Errorf("memory of %s %s: %w", channel, n.date.Format(time.DateOnly), err)
			}
		}
	}
	return nil
}

// chooseParts gives r the range of run's filter of bits that r's pass
// probes, as the driver's bytes, and returns the parts it chose.
func (db *DB) chooseParts(ctx context.Context, run string, bits int, r Rememberer) ([]int, error) {
	from, to := r.FilterRange(bits)
	var parts []int
	err := db.readRaw(ctx, `SELECT substring(filter FROM $2 FOR $3) FROM settled_filters WHERE run_id = $1`,
		[]any{run, from + 1, to - from}, func(v [][]byte) error {
			var err error
			parts, err = r.Parts(bits, v[0])
			return err
		})
	return parts, err
}

// rememberedSQL picks the runs r whose memory a run reads: the current
// successful runs of channel $1 dated from $2 to before $3 that left a
// filter or parts.
const rememberedSQL = `r.channel = $1 AND r.business_date >= $2 AND r.business_date < $3
   AND r.status = 'SUCCEEDED' AND r.superseded_by IS NULL
   AND (EXISTS (SELECT 1 FROM settled_filters f WHERE f.run_id = r.id)
        OR EXISTS (SELECT 1 FROM settled_keys s WHERE s.run_id = r.id))`

// RemembersBefore reports whether MemoryBefore would read any night.
func (db *DB) RemembersBefore(ctx context.Context, channel string, day reconcile.BusinessDay, days int) (bool, error) {
	var any bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs r WHERE `+rememberedSQL+`)`,
		channel, dateOf(day).AddDate(0, 0, -days), dateOf(day)).Scan(&any)
	if err != nil {
		return false, fmt.Errorf("memory of %s: %w", channel, interpretError(err))
	}
	return any, nil
}

// readRaw hands fn each row's columns as the driver's bytes in binary,
// valid until fn returns: a night's parts and filter are megabytes each,
// read to be used once.
func (db *DB) readRaw(ctx context.Context, sql string, args []any, fn func([][]byte) error) error {
	args = append([]any{pgx.QueryResultFormats{pgx.BinaryFormatCode}}, args...)
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return interpretError(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.RawValues()); err != nil {
			return err
		}
	}
	return interpretError(rows.Err())
}

// findingSelect reads findings with everything a report shows of them.
const findingSelect = `
SELECT f.ref, f.category, f.kind, coalesce(f.order_no, ''), coalesce(f.refund_no, ''),
       coalesce(f.channel_txn_id, ''), coalesce(f.original_txn_id, ''), coalesce(f.local_txn_id, ''),
       f.channel_amount, coalesce(f.currency, ''), f.local_amount, coalesce(f.local_currency, ''),
       coalesce(f.channel_status, ''), coalesce(f.local_status, ''), coalesce(f.idem_status, ''),
       f.occurred_at, coalesce(f.line, 0), coalesce(f.raw_kind, ''), coalesce(f.hint, ''), f.auto_reverse,
       coalesce(f.row_fingerprint, ''), coalesce(f.related, '{}'), coalesce(f.fee_milli, 0),
       coalesce(f.expected_fee_milli, 0), coalesce(f.dispute_id, ''), coalesce(f.dispute_status, ''),
       coalesce(f.dispute_reason, ''), coalesce(f.customer, ''),
       f.payout_id IS NOT NULL OR f.bank_ref IS NOT NULL, coalesce(f.payout_channel, ''), coalesce(f.payout_id, ''),
       f.expected_on, coalesce(f.bank_account, ''), coalesce(f.bank_ref, ''), f.booked_on
  FROM findings f`

func (db *DB) queryFindings(ctx context.Context, what, sql string, args ...any) ([]reconcile.Finding, error) {
	rows, err := db.pool.Query(ctx, findingSelect+" "+sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpretError(err))
	}
	defer rows.Close()
	var out []reconcile.Finding
	for rows.Next() {
		var (
			f                          reconcile.Finding
			ref                        *string
			category, kind, chStatus   string
			channelAmount, localAmount *int64
			occurredAt                 *time.Time
			hasPayout                  bool
			p                          reconcile.PayoutFacts
			d                          reconcile.DisputeFacts
			expectedOn, bookedOn       *time.Time
		)
		if err := rows.Scan(&ref, &category, &kind, &f.OrderNo, &f.RefundNo, &f.ChannelTxnID,
			&f.OriginalTxnID, &f.LocalTxnID, &channelAmount, &f.Currency, &localAmount,
			&f.LocalCurrency, &chStatus, &f.LocalStatus, &f.IdemStatus, &occurredAt, &f.Line,
			&f.RawKind, &f.Hint, &f.AutoReverse, &f.RowFingerprint, &f.Related, &f.FeeMilli,
			&f.ExpectedFeeMilli, &d.ID, &d.Status, &d.Reason, &d.Customer,
			&hasPayout, &p.Channel, &p.ID, &expectedOn, &p.Account, &p.BankRef, &bookedOn); err != nil {
			return nil, fmt.Errorf("%s: %w", what, interpretError(err))
		}
		if hasPayout {
			if expectedOn != nil {
				p.ExpectedOn = *expectedOn
			}
			if bookedOn != nil {
				p.BookedOn = *bookedOn
			}
			f.Payout = &p
		}
		if d != (reconcile.DisputeFacts{}) {
			f.Dispute = &d
		}
		if ref != nil {
			f.Ref = *ref
		}
		f.Category, f.Kind, f.ChannelStatus = reconcile.Category(category), reconcile.Kind(kind), reconcile.TxnStatus(chStatus)
		if channelAmount != nil {
			f.HasChannel, f.ChannelAmount = true, *channelAmount
		}
		if localAmount != nil {
			f.HasLocal, f.LocalAmount = true, *localAmount
		}
		if occurredAt != nil {
			f.OccurredAt = *occurredAt
		}
		if len(f.Related) == 0 {
			f.Related = nil
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpretError(err))
	}
	return out, nil
}

// PendingBefore returns the pending findings of channel from dates before
// day that this date's run must settle: those still OPEN, and those a
// superseded earlier run of this same date settled (it is being redone).
func (db *DB) PendingBefore(ctx context.Context, channel string, day reconcile.BusinessDay) ([]reconcile.Finding, error) {
	return db.queryFindings(ctx, "pending findings of "+channel, `
 WHERE f.channel = $1 AND f.category = 'pending' AND f.business_date < $2
   AND (f.state = 'OPEN'
        OR (f.state IN ('RESOLVED', 'ESCALATED') AND f.settled_by IN (
              SELECT id FROM runs WHERE channel = $1 AND business_date = $2)))
 ORDER BY f.id`, channel, dateOf(day))
}

// ReversedOnDate returns the findings of the current successful run of
// channel and day that carry a reversal journal: a corrected file must
// still carry their duplicates.
func (db *DB) ReversedOnDate(ctx context.Context, channel string, day reconcile.BusinessDay, shard reconcile.Shard) ([]reconcile.Finding, error) {
	return db.queryFindings(ctx, "reversed findings of "+channel, `
  JOIN runs r ON r.id = f.run_id
 WHERE r.channel = $1 AND r.business_date = $2 AND r.status = 'SUCCEEDED' AND r.superseded_by IS NULL
   AND (r.shard = $3 OR r.shard = '' OR $3 = '')
   AND f.journal_key IS NOT NULL
 ORDER BY f.id`, channel, dateOf(day), shard.String())
}

// StillOpen returns findings of channel that have waited for a decision
// since before the given time, oldest first, at most limit of them. A
// chargeback whose dispute was won waits for nothing: the money came
// back.
func (db *DB) StillOpen(ctx context.Context, channel string, before time.Time, limit int) ([]reconcile.Finding, error) {
	return db.queryFindings(ctx, "open findings of "+channel, `
 WHERE f.channel = $1 AND f.state = 'OPEN' AND f.category NOT IN ('pending', 'matched')
   AND f.dispute_status IS DISTINCT FROM 'won'
   AND f.created_at < $2
 ORDER BY f.created_at, f.id LIMIT $3`, channel, before, limit)
}

// RunFindings returns every finding of a run, in the order written.
func (db *DB) RunFindings(ctx context.Context, runID string) ([]reconcile.Finding, error) {
	return db.queryFindings(ctx, "findings of run "+runID, `WHERE f.run_id = $1 ORDER BY f.id`, runID)
}

// LoadResult rebuilds what a finished run found, for an alert sent again.
func (db *DB) LoadResult(ctx context.Context, runID string) (*reconcile.Result, error) {
	run, err := db.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	res := &reconcile.Result{Run: run}
	var counts, fees []byte
	var channelRows, localRows, batchRows *int
	if err := db.pool.QueryRow(ctx, `
SELECT counts::text::bytea, channel_rows, local_rows, batch_rows, coalesce(fees, 'null')::text::bytea
  FROM runs WHERE id = $1`, runID).
		Scan(&counts, &channelRows, &localRows, &batchRows, &fees); err != nil {
		return nil, fmt.Errorf("load run %s: %w", runID, interpretError(err))
	}
	if err := json.Unmarshal(fees, &res.Fees); err != nil {
		return nil, fmt.Errorf("load run %s: fees: %w", runID, err)
	}
	if res.Counts, err = countsOf(counts); err != nil {
		return nil, fmt.Errorf("load run %s: counts: %w", runID, err)
	}
	for _, p := range []struct {
		dst *int
		src *int
	}{{&res.ChannelRows, channelRows}, {&res.LocalRows, localRows}, {&res.BatchRows, batchRows}} {
		if p.src != nil {
			*p.dst = *p.src
		}
	}
	if res.Findings, err = db.RunFindings(ctx, runID); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `
SELECT idempotency_key, kind, channel, coalesce(order_no, ''), coalesce(refund_no, ''), channel_txn_id,
       coalesce(row_key, channel_txn_id), currency, amount, coalesce(memo, '')
  FROM journals
 WHERE idempotency_key IN (SELECT journal_key FROM findings WHERE run_id = $1 AND journal_key IS NOT NULL)
 ORDER BY idempotency_key`, runID)
	if err != nil {
		return nil, fmt.Errorf("load run %s: journals: %w", runID, interpretError(err))
	}
	res.Journals, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (reconcile.Journal, error) {
		var j reconcile.Journal
		err := row.Scan(&j.IdempotencyKey, &j.Kind, &j.Channel, &j.OrderNo, &j.RefundNo, &j.ChannelTxnID,
			&j.Row, &j.Currency, &j.Amount, &j.Memo)
		return j, err
	})
	if err != nil {
		return nil, fmt.Errorf("load run %s: journals: %w", runID, interpretError(err))
	}
	return res, nil
}

// CurrentRuns returns the successful runs of channel and day that no
// later run superseded: one for a date run whole, one per shard for a
// date split across machines.
func (db *DB) CurrentRuns(ctx context.Context, channel string, day reconcile.BusinessDay) ([]reconcile.Run, error) {
	rows, err := db.pool.Query(ctx, `
SELECT id FROM runs
 WHERE channel = $1 AND business_date = $2 AND status = 'SUCCEEDED' AND superseded_by IS NULL
 ORDER BY shard, finished_at`, channel, dateOf(day))
	if err != nil {
		return nil, fmt.Errorf("runs of %s %s: %w", channel, day, interpretError(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("runs of %s %s: %w", channel, day, interpretError(err))
	}
	var out []reconcile.Run
	for _, id := range ids {
		r, err := db.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ClaimReport records a report over the given runs and takes the right to
// send its alert for hold, returning how far an earlier attempt got. It is
// false when that alert was sent already or is being sent: a report over
// the same shards is alerted once.
func (db *DB) ClaimReport(ctx context.Context, id, channel string, day reconcile.BusinessDay, runIDs []string, hold time.Duration) (bool, reconcile.Delivery, error) {
	if _, err := db.pool.Exec(ctx, `
INSERT INTO shard_reports (id, channel, business_date, run_ids) VALUES ($1, $2, $3, $4)
ON CONFLICT (id) DO NOTHING`, id, channel, dateOf(day), runIDs); err != nil {
		return false, reconcile.Delivery{}, fmt.Errorf("claim report %s: %w", id, interpretError(err))
	}
	return claimAlert(ctx, db.pool, reportAlerts, id, hold)
}

// ReportAlertProgress records how far a claimed report alert got.
func (db *DB) ReportAlertProgress(ctx context.Context, id string, d reconcile.Delivery) error {
	return alertProgress(ctx, db.pool, reportAlerts, id, d)
}

// ReportAlertDone records how sending a claimed report alert went.
func (db *DB) ReportAlertDone(ctx context.Context, id string, sendErr error) error {
	sql := `UPDATE shard_reports SET alert_sent_at = now(), alert_claimed_until = NULL WHERE id = $1`
	if sendErr != nil {
		sql = `UPDATE shard_reports SET alert_claimed_until = NULL WHERE id = $1`
	}
	if _, err := db.pool.Exec(ctx, sql, id); err != nil {
		return fmt.Errorf("record report alert %s: %w", id, interpretError(err))
	}
	return nil
}
