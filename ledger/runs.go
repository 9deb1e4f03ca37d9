package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
)

// Lease says who holds a run and for how long without renewing. The zero
// Lease records neither.
type Lease struct {
	Holder *RunLock
	For    time.Duration
}

// StartRun records run as RUNNING, under lease. A run id already taken is
// reconcile.ErrConflict.
func (db *DB) StartRun(ctx context.Context, run reconcile.Run, lease Lease) error {
	var pid, until any
	if lease.Holder != nil {
		pid = int32(lease.Holder.PID())
	}
	if lease.For > 0 {
		until = lease.For.String()
	}
	_, err := db.pool.Exec(ctx, `
INSERT INTO runs (id, channel, business_date, format, file, file_sha256, status, started_at,
                  forced, holder_pid, lease_until, shard)
VALUES ($1, $2, $3, $4, $5, $6, 'RUNNING', coalesce($7, now()), $8, $9, now() + $10::interval, $11)`,
		run.ID, run.Channel, dateOf(run.Day), run.Format, run.File, run.FileSHA256, nullTime(run.StartedAt),
		run.Forced, pid, until, run.Shard.String())
	if err != nil {
		return fmt.Errorf("start run %s: %w", run.ID, interpretError(err))
	}
	return nil
}

// Outcome is everything a successful run writes.
type Outcome struct {
	Result *reconcile.Result
	// Memory is the night's memory as it is stored (matcher.Memory): later
	// nights recognise a duplicate of its rows. Its bytes are kept as they
	// are, never read here.
	Memory reconcile.NightMemory
	// Resolved and Escalated name earlier pending findings (by Ref) this
	// run found in its file, or did not.
	Resolved, Escalated []string
	// DisputeEvents are the dispute events and refund reversals of the
	// run's file no earlier file carried (rule 14): kept, they set the
	// standing of their disputes' chargeback findings.
	DisputeEvents reconcile.EventLog
	// Payouts are the payouts a channel's file told of; Entries and
	// Arrivals a bank statement's entries and the payouts it found the
	// money of (rule 15).
	Payouts  []reconcile.Payout
	Entries  []reconcile.KeyedEntry
	Arrivals []reconcile.PayoutArrival
	// Summary and Workbook are the run's reports, kept so the same file
	// again gets them back without the work being redone. When Reports is
	// set, it gives them instead, called inside the transaction after the
	// large writes: the caller can make them meanwhile.
	Summary      []byte
	WorkbookName string
	Workbook     []byte
	Reports      func() (summary, workbook []byte, err error)
}

// CompleteRun writes the whole outcome of a run in one transaction: its
// findings, the reversal journals of its unambiguous duplicates, the rows
// of its file, the fate of earlier pending findings, the supersession of
// earlier runs of the same date, its reports, and the run's move to
// SUCCEEDED. Journals whose idempotency key is already taken, by an earlier
// or a concurrent run, are not posted again; their findings still point at
// them. It returns how many journals were newly posted.
//
// Runs of the same channel and date serialise on an advisory lock, so a
// second run sees the first one's journals rather than racing it. A run
// that is not RUNNING (a successor took over its expired lease) is refused
// with reconcile.ErrConflict, a run that does not exist with
// reconcile.ErrNotFound.
func (db *DB) CompleteRun(ctx context.Context, o Outcome) (posted int, err error) {
	res := o.Result
	run := res.Run
	journals, keyByRow, err := checkJournals(res)
	if err != nil {
		return 0, fmt.Errorf("complete run %s: %w", run.ID, err)
	}
	counts, err := json.Marshal(res.Counts)
	if err != nil {
		return 0, fmt.Errorf("complete run %s: counts: %w", run.ID, err)
	}
	fees, err := json.Marshal(res.Fees)
	if err != nil {
		return 0, fmt.Errorf("complete run %s: fees: %w", run.ID, err)
	}

	var reportsErr error // not the database's: said as it is
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1 || '/' || $2))`,
			run.Channel, run.Day.String()); err != nil {
			return err
		}
		// A clean error before any work; the conditional UPDATE at the end
		// is what actually guards against finishing a run twice.
		if err := runIsRunning(ctx, tx, run.ID); err != nil {
			return err
		}
		n, err := postJournals(ctx, tx, run.ID, journals)
		if err != nil {
			return fmt.Errorf("post journals: %w", err)
		}
		if err := writeOutcome(ctx, tx, o, keyByRow); err != nil {
			return err
		}
		if o.Reports != nil {
			if o.Summary, o.Workbook, reportsErr = o.Reports(); reportsErr != nil {
				return reportsErr
			}
		}
		tag, err := tx.Exec(ctx, `
UPDATE runs
   SET status = 'SUCCEEDED', finished_at = coalesce($2, now()),
       channel_rows = $3, local_rows = $4, counts = $5::jsonb, error = NULL,
       batch_rows = $6, summary = $7::jsonb, workbook_name = $8, workbook = $9, lease_until = NULL,
       fees = $10::jsonb
 WHERE id = $1 AND status = 'RUNNING'`,
			run.ID, nullTime(run.FinishedAt), res.ChannelRows, res.LocalRows, string(counts),
			res.BatchRows, nullJSON(o.Summary), nullString(o.WorkbookName), o.Workbook, string(fees))
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			if err := runIsRunning(ctx, tx, run.ID); err != nil {
				return err
			}
			return fmt.Errorf("run was not updated")
		}
		posted = n
		return nil
	})
	if reportsErr != nil {
		return 0, fmt.Errorf("complete run %s: %w", run.ID, reportsErr)
	}
	if err != nil {
		return 0, fmt.Errorf("complete run %s: %w", run.ID, interpretError(err))
	}
	return posted, nil
}

// writeOutcome writes what a run found beside its journals: its findings,
// the fate of earlier pending findings, its dispute events, the
// supersession of the earlier runs of its date (and the standing of the
// disputes that touches), and the memory of its rows.
func writeOutcome(ctx context.Context, tx pgx.Tx, o Outcome, keyByRow map[string]string) error {
	run := o.Result.Run
	if err := copyFindings(ctx, tx, run, o.Result.Findings, keyByRow); err != nil {
		return fmt.Errorf("write findings: %w", err)
	}
	if err := settlePending(ctx, tx, run.ID, o.Resolved, o.Escalated); err != nil {
		return fmt.Errorf("settle pending findings: %w", err)
	}
	if err := keepEvents(ctx, tx, run, o.DisputeEvents); err != nil {
		return fmt.Errorf("keep dispute events: %w", err)
	}
	if err := keepPayouts(ctx, tx, run, o.Payouts); err != nil {
		return fmt.Errorf("keep payouts: %w", err)
	}
	if err := keepStatement(ctx, tx, run, o.Entries, o.Arrivals); err != nil {
		return fmt.Errorf("keep the statement: %w", err)
	}
	if err := supersede(ctx, tx, run); err != nil {
		return fmt.Errorf("supersede earlier runs: %w", err)
	}
	if err := settleDisputes(ctx, tx, run); err != nil {
		return fmt.Errorf("settle disputes: %w", err)
	}
	if err := remember(ctx, tx, run, o.Memory); err != nil {
		return fmt.Errorf("remember settled rows: %w", err)
	}
	return nil
}

// checkJournals refuses a result the database would refuse at commit, with
// a plainer message, and one whose auto-reversed findings lack a journal:
// a finding must never be marked REVERSED without one. It returns the
// journals in key order, so concurrent posters lock keys in the same
// order, and each journal's key by the row it reverses (Journal.Row, the
// finding's RowKey).
func checkJournals(res *reconcile.Result) ([]reconcile.Journal, map[string]string, error) {
	keyByRow := make(map[string]string, len(res.Journals))
	for _, j := range res.Journals {
		if j.IdempotencyKey == "" {
			return nil, nil, fmt.Errorf("journal for %s has no idempotency key", j.Row)
		}
		if len(j.Lines) == 0 || !j.Lines.Balanced() {
			return nil, nil, fmt.Errorf("journal %s is empty or unbalanced", j.IdempotencyKey)
		}
		if _, ok := keyByRow[j.Row]; !ok {
			keyByRow[j.Row] = j.IdempotencyKey
		}
	}
	for _, f := range res.Findings {
		if f.AutoReverse && keyByRow[f.RowKey()] == "" {
			return nil, nil, fmt.Errorf("finding %s %s (%s) is marked for reversal but has no journal",
				f.Category, f.Key(), f.RowKey())
		}
	}
	journals := append([]reconcile.Journal(nil), res.Journals...)
	sort.SliceStable(journals, func(i, k int) bool {
		return journals[i].IdempotencyKey < journals[k].IdempotencyKey
	})
	return journals, keyByRow, nil
}

// runIsRunning returns nil for a RUNNING run, else why it cannot finish.
func runIsRunning(ctx context.Context, q pgx.Tx, id string) error {
	var status string
	if err := q.QueryRow(ctx, `SELECT status FROM runs WHERE id = $1`, id).Scan(&status); err != nil {
		return err
	}
	if status != string(reconcile.RunRunning) {
		return fmt.Errorf("%w: run is already %s", reconcile.ErrConflict, status)
	}
	return nil
}

// postJournalsSQL inserts all journals in one statement. ON CONFLICT DO
// NOTHING leaves a key already posted alone and returns only the new rows,
// which are the ones that get lines.
const postJournalsSQL = `
INSERT INTO journals (idempotency_key, kind, channel, order_no, refund_no, channel_txn_id,
                      currency, amount, memo, run_id, shard, row_key)
SELECT k, kind, ch, nullif(o, ''), nullif(r, ''), txn, cur, amt, nullif(memo, ''), $10,
       coalesce((SELECT shard FROM runs WHERE id = $10), ''), nullif(rk, '')
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
              $7::text[], $8::bigint[], $9::text[], $11::text[])
       WITH ORDINALITY AS j(k, kind, ch, o, r, txn, cur, amt, memo, rk, ord)
 ORDER BY ord
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING id, idempotency_key`

func postJournals(ctx context.Context, tx pgx.Tx, runID string, journals []reconcile.Journal) (int, error) {
	if len(journals) == 0 {
		return 0, nil
	}
	n := len(journals)
	keys, kinds, channels := make([]string, n), make([]string, n), make([]string, n)
	orders, refunds, txns := make([]string, n), make([]string, n), make([]string, n)
	currencies, amounts, memos := make([]string, n), make([]int64, n), make([]string, n)
	rowKeys := make([]string, n)
	for i, j := range journals {
		keys[i], kinds[i], channels[i] = j.IdempotencyKey, j.Kind, j.Channel
		orders[i], refunds[i], txns[i] = j.OrderNo, j.RefundNo, j.ChannelTxnID
		currencies[i], amounts[i], memos[i] = j.Currency, j.Amount, j.Memo
		rowKeys[i] = j.Row
	}
	rows, err := tx.Query(ctx, postJournalsSQL,
		keys, kinds, channels, orders, refunds, txns, currencies, amounts, memos, runID, rowKeys)
	if err != nil {
		return 0, err
	}
	idByKey := map[string]int64{}
	for rows.Next() {
		var id int64
		var key string
		if err := rows.Scan(&id, &key); err != nil {
			rows.Close()
			return 0, err
		}
		idByKey[key] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(idByKey) == 0 {
		return 0, nil
	}

	// Lines only for journals this statement inserted, and only from the
	// first journal of a key when the result repeats one.
	var lines [][]any
	seen := map[string]bool{}
	for _, j := range journals {
		id, ok := idByKey[j.IdempotencyKey]
		if !ok || seen[j.IdempotencyKey] {
			continue
		}
		seen[j.IdempotencyKey] = true
		for i, p := range j.Lines {
			lines = append(lines, []any{id, i + 1, p.Account, p.Amount, p.Currency})
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"journal_lines"},
		[]string{"journal_id", "line_no", "account", "amount", "currency"},
		pgx.CopyFromRows(lines)); err != nil {
		return 0, err
	}
	return len(idByKey), nil
}

var findingColumns = []string{
	"run_id", "channel", "business_date", "category", "kind", "order_no", "refund_no",
	"channel_txn_id", "original_txn_id", "local_txn_id", "channel_amount", "currency",
	"local_amount", "local_currency", "channel_status", "local_status", "idem_status",
	"occurred_at", "line", "raw_kind", "hint", "auto_reverse", "state", "journal_key", "ref", "shard",
	"row_fingerprint", "related", "fee_milli", "expected_fee_milli", "dispute_id", "dispute_status", "dispute_reason",
	"customer", "payout_channel", "payout_id", "expected_on", "bank_account", "bank_ref", "booked_on",
}

// copyFindings streams the findings into the table with COPY, one row at a
// time from the slice, so a run with many findings costs one round trip and
// no second copy in memory.
func copyFindings(ctx context.Context, tx pgx.Tx, run reconcile.Run, fs []reconcile.Finding, keyByRow map[string]string) error {
	date, shard := dateOf(run.Day), run.Shard.String()
	i := -1
	// One row's values, filled again for each finding: COPY encodes a row
	// before it asks for the next.
	row := make([]any, 0, len(findingColumns))
	src := pgx.CopyFromFunc(func() ([]any, error) {
		i++
		if i >= len(fs) {
			return nil, nil
		}
		f := &fs[i]
		var channelAmount, localAmount any
		if f.HasChannel {
			channelAmount = f.ChannelAmount
		}
		if f.HasLocal {
			localAmount = f.LocalAmount
		}
		var related, feeMilli, expectedFee any
		if len(f.Related) > 0 {
			related = f.Related
		}
		switch f.Category {
		case reconcile.FeeMismatch:
			feeMilli, expectedFee = f.FeeMilli, f.ExpectedFeeMilli
		case reconcile.Chargeback:
			feeMilli = f.FeeMilli // the dispute fee
		}
		state, journalKey := reconcile.StateOpen, any(nil)
		if f.AutoReverse {
			state, journalKey = reconcile.StateReversed, keyByRow[f.RowKey()]
		}
		d := f.DisputeFacts()
		row = append(row[:0],
			run.ID, run.Channel, date, string(f.Category), string(f.Kind), nullString(f.OrderNo),
			nullString(f.RefundNo), nullString(f.ChannelTxnID), nullString(f.OriginalTxnID),
			nullString(f.LocalTxnID), channelAmount, nullString(f.Currency), localAmount,
			nullString(f.LocalCurrency), nullString(string(f.ChannelStatus)), nullString(f.LocalStatus),
			nullString(f.IdemStatus), nullTime(f.OccurredAt), f.Line, nullString(f.RawKind),
			nullString(f.Hint), f.AutoReverse, state, journalKey, nullString(f.Ref), shard,
			nullString(f.RowFingerprint), related, feeMilli, expectedFee,
			nullString(d.ID), nullString(d.Status), nullString(d.Reason), nullString(d.Customer))
		if p := f.Payout; p != nil {
			row = append(row, nullString(p.Channel), nullString(p.ID), nullTime(p.ExpectedOn), nullString(p.Account),
				nullString(p.BankRef), nullTime(p.BookedOn))
		} else {
			row = append(row, nil, nil, nil, nil, nil, nil)
		}
		return row, nil
	})
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"findings"}, findingColumns, src)
	if err != nil {
		return err
	}
	if n != int64(len(fs)) {
		return fmt.Errorf("copied %d findings of %d", n, len(fs))
	}
	return nil
}

// FailRun moves a RUNNING run to FAILED with the reason. A run that is not
// RUNNING is refused with reconcile.ErrConflict, so a late failure report
// cannot overwrite a success.
func (db *DB) FailRun(ctx context.Context, runID string, finishedAt time.Time, msg string) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
UPDATE runs SET status = 'FAILED', finished_at = coalesce($2, now()), error = $3, lease_until = NULL
 WHERE id = $1 AND status = 'RUNNING'`, runID, nullTime(finishedAt), msg)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			return nil
		}
		if err := runIsRunning(ctx, tx, runID); err != nil {
			return err
		}
		return fmt.Errorf("run was not updated")
	})
	if err != nil {
		return fmt.Errorf("fail run %s: %w", runID, interpretError(err))
	}
	return nil
}

// GetRun returns the run with id, or reconcile.ErrNotFound. The table keeps
// the business date but not its time zone, so Day is that date in UTC.
func (db *DB) GetRun(ctx context.Context, id string) (reconcile.Run, error) {
	var (
		r          reconcile.Run
		date       time.Time
		status     string
		finishedAt *time.Time
		errText    *string
		shard      string
	)
	err := db.pool.QueryRow(ctx, `
SELECT id, channel, business_date, format, file, file_sha256, status, started_at, finished_at, error, shard
  FROM runs WHERE id = $1`, id).Scan(&r.ID, &r.Channel, &date, &r.Format, &r.File, &r.FileSHA256,
		&status, &r.StartedAt, &finishedAt, &errText, &shard)
	if err != nil {
		return reconcile.Run{}, fmt.Errorf("get run %s: %w", id, interpretError(err))
	}
	if r.Shard, err = reconcile.ParseShard(shard); err != nil {
		return reconcile.Run{}, fmt.Errorf("get run %s: %w", id, err)
	}
	r.Day = reconcile.BusinessDay{Date: date, Location: time.UTC}
	r.Status = reconcile.RunStatus(status)
	if finishedAt != nil {
		r.FinishedAt = *finishedAt
	}
	if errText != nil {
		r.Error = *errText
	}
	return r, nil
}

// dateOf is the business date as a UTC midnight, which pgx writes as that
// calendar date whatever the day's own time zone.
func dateOf(d reconcile.BusinessDay) time.Time { return d.UTCDate() }

// nullString writes an empty optional text as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullJSON writes an absent document as NULL.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// nullTime writes the zero time as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}
