package ledger

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
)

// A dispute is followed across nights by its events (rule 14): every
// chargeback, reversal, second chargeback and refund reversal a run's
// file carried that no earlier file had, kept in dispute_events while the
// run is current.

// currentEvents picks the events e of channel $1 that runs still current
// kept, of dates before $2.
const currentEvents = `
  FROM dispute_events e JOIN runs r ON r.id = e.run_id
 WHERE e.channel = $1 AND e.business_date < $2 AND r.status = 'SUCCEEDED' AND r.superseded_by IS NULL`

// eventsOf picks the events of channel $1 that runs still current kept,
// of dates before $2, whose column (dispute_id or order_no) is one of
// the list $3. The list is joined, not matched by ANY: at 30,000
// disputes the planner scanned every event in parallel against the
// array, 138–178 ms where the join took 14–20 ms (EXPLAIN ANALYZE on the
// 3M bench database), and a night that asks about them waits for it.
func eventsOf(column string) string {
	return `
SELECT e.kind, e.dispute_id, e.order_no, e.refund_no, e.payment_id, e.channel_txn_id, e.amount_minor, e.currency,
       e.fee_milli, e.occurred_at, e.line, e.reason, e.raw_kind
  FROM (SELECT DISTINCT unnest($3::text[])) AS t(v)
  JOIN dispute_events e ON e.channel = $1 AND e.` + column + ` = t.v
  JOIN runs r ON r.id = e.run_id
 WHERE e.business_date < $2 AND r.status = 'SUCCEEDED' AND r.superseded_by IS NULL
 ORDER BY e.occurred_at, e.line`
}

var eventsOfDisputes, eventsOfOrders = eventsOf("dispute_id"), eventsOf("order_no")

var eventColumns = []string{
	"run_id", "channel", "business_date", "kind", "dispute_id", "order_no", "refund_no", "payment_id",
	"channel_txn_id", "amount_minor", "currency", "fee_milli", "occurred_at", "line", "reason", "raw_kind",
}

// keepEvents writes the run's new dispute events, streamed from their
// log one row at a time.
func keepEvents(ctx context.Context, tx pgx.Tx, run reconcile.Run, events reconcile.EventLog) error {
	if events.Len() == 0 {
		return nil
	}
	date := dateOf(run.Day)
	next, stop := iter.Pull(events.All())
	defer stop()
	row := make([]any, len(eventColumns))
	src := pgx.CopyFromFunc(func() ([]any, error) {
		e, ok := next()
		if !ok {
			return nil, nil
		}
		row = append(row[:0], run.ID, run.Channel, date, string(e.Kind), e.DisputeID, e.OrderNo, e.RefundNo, e.PaymentID,
			e.ChannelTxnID, e.Amount, e.Currency, e.FeeMilli, nullTime(e.OccurredAt), e.Line, e.Reason, e.RawKind)
		return row, nil
	})
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"dispute_events"}, eventColumns, src)
	if err == nil && n != int64(events.Len()) {
		err = fmt.Errorf("copied %d dispute events of %d", n, events.Len())
	}
	return err
}

// settleDisputes sets the standing of the chargeback findings of every
// dispute the run's date touches (its events, and those of the runs of
// the date it replaces) from the last of the dispute's events that
// current runs kept, whatever their dates: a date run again never undoes
// what a later night's file said, and a corrected file that drops an
// event undoes it. A dispute whose every current event is this run's is
// as the matcher told it. Call it once the run has superseded the earlier
// runs of its date. The standing is the channel's word: the finding's
// state and version, a reviewer's, are left alone.
//
// The statements are shaped so that no plan is worse than linear: the
// findings and events this transaction wrote have no statistics yet, and
// a join the planner took for small ran for minutes at 30,000 disputes.
func settleDisputes(ctx context.Context, tx pgx.Tx, run reconcile.Run) error {
	rows, err := tx.Query(ctx, `
SELECT DISTINCT e.dispute_id FROM runs r JOIN dispute_events e ON e.run_id = r.id
 WHERE r.channel = $1 AND r.business_date = $2 AND e.kind <> 'refund_reversal'`, run.Channel, dateOf(run.Day))
	if err != nil {
		return err
	}
	touched, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(touched) == 0 {
		return err
	}
	rows, err = tx.Query(ctx, `
SELECT e.dispute_id,
       (array_agg(e.kind ORDER BY e.occurred_at DESC NULLS LAST, e.business_date DESC, e.line DESC))[1],
       bool_or(e.run_id <> $3)
  FROM unnest($2::text[]) AS t(id) JOIN dispute_events e ON e.channel = $1 AND e.dispute_id = t.id
  JOIN runs r ON r.id = e.run_id
 WHERE e.kind <> 'refund_reversal' AND (r.id = $3 OR r.status = 'SUCCEEDED' AND r.superseded_by IS NULL)
 GROUP BY e.dispute_id`, run.Channel, touched, run.ID)
	if err != nil {
		return err
	}
	var ids, words []string
	for rows.Next() {
		var id, kind string
		var others bool
		if err := rows.Scan(&id, &kind, &others); err != nil {
			rows.Close()
			return err
		}
		if others {
			ids, words = append(ids, id), append(words, reconcile.DisputeStanding(reconcile.Kind(kind)))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return err
	}
	_, err = tx.Exec(ctx, `
UPDATE findings f SET dispute_status = u.status
  FROM unnest($2::text[], $3::text[]) AS u(id, status)
 WHERE f.channel = $1 AND f.dispute_id = u.id AND f.category = 'chargeback' AND f.state <> 'SUPERSEDED'`,
		run.Channel, ids, words)
	return err
}

// DisputeEvents returns the events earlier nights kept of the disputes.
func (db *DB) DisputeEvents(ctx context.Context, channel string, day reconcile.BusinessDay, disputes []string) ([]reconcile.Transaction, error) {
	if len(disputes) == 0 {
		return nil, nil
	}
	return db.events(ctx, day, eventsOfDisputes,
		channel, dateOf(day), disputes)
}

// orderEvents returns the events earlier nights kept of the orders.
func (db *DB) orderEvents(ctx context.Context, channel string, day reconcile.BusinessDay, orders []string) ([]reconcile.Transaction, error) {
	return db.events(ctx, day, eventsOfOrders,
		channel, dateOf(day), orders)
}

func (db *DB) events(ctx context.Context, day reconcile.BusinessDay, sql string, args ...any) ([]reconcile.Transaction, error) {
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("earlier dispute events: %w", interpretError(err))
	}
	defer rows.Close()
	var out []reconcile.Transaction
	for rows.Next() {
		var (
			e    reconcile.Transaction
			kind string
			at   *time.Time
		)
		if err := rows.Scan(&kind, &e.DisputeID, &e.OrderNo, &e.RefundNo, &e.PaymentID, &e.ChannelTxnID, &e.Amount,
			&e.Currency, &e.FeeMilli, &at, &e.Line, &e.Reason, &e.RawKind); err != nil {
			return nil, fmt.Errorf("earlier dispute events: %w", interpretError(err))
		}
		e.Kind, e.Status = reconcile.Kind(kind), reconcile.StatusSuccess
		if at != nil {
			e.OccurredAt = at.In(day.Location)
		}
		out = append(out, e)
	}
	return out, interpretError(rows.Err())
}

// DisputedOrders returns, of the orders, those with a dispute of earlier
// nights that still stands (more charged back than reversed), each with
// such a dispute: their duplicates are not reversed by themselves
// (matcher.Known.Disputed).
func (db *DB) DisputedOrders(ctx context.Context, channel string, day reconcile.BusinessDay, orders []string) (map[string]string, error) {
	if len(orders) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `
SELECT order_no, min(dispute_id) FROM (
    SELECT e.order_no, e.dispute_id`+currentEvents+`
       AND e.order_no = ANY($3::text[]) AND e.kind <> 'refund_reversal'
     GROUP BY e.order_no, e.dispute_id
    HAVING sum(CASE e.kind WHEN 'chargeback_reversal' THEN -e.amount_minor ELSE e.amount_minor END) > 0) d
 GROUP BY order_no`,
		channel, dateOf(day), orders)
	if err != nil {
		return nil, fmt.Errorf("disputed orders: %w", interpretError(err))
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var order, dispute string
		if err := rows.Scan(&order, &dispute); err != nil {
			return nil, fmt.Errorf("disputed orders: %w", interpretError(err))
		}
		out[order] = dispute
	}
	return out, interpretError(rows.Err())
}

// The merchant's own record of disputes (config.Disputes), where it keeps
// one: a relation with the columns disputeColumns, named in the config.

var disputeColumns = []string{"dispute_id", "channel", "order_no", "amount_minor", "currency", "status", "opened_at"}

// relation quotes a relation name the config checked ("disputes",
// "shop.disputes") for a query.
func relation(name string) string {
	return pgx.Identifier(strings.Split(name, ".")).Sanitize()
}

// CheckDisputes says what is wrong with the merchant's disputes relation:
// missing, or without a column the job reads; nil when it serves.
func (db *DB) CheckDisputes(ctx context.Context, name string) error {
	var found []string
	err := db.pool.QueryRow(ctx, `
SELECT coalesce(array_agg(attname::text ORDER BY attname), '{}') FROM pg_attribute
 WHERE attrelid = to_regclass($1) AND attname = ANY($2::text[]) AND attnum > 0 AND NOT attisdropped`,
		relation(name), disputeColumns).Scan(&found)
	if err != nil {
		return fmt.Errorf("look for %s: %w", name, interpretError(err))
	}
	if len(found) == 0 {
		var exists bool
		if err := db.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, relation(name)).Scan(&exists); err != nil {
			return fmt.Errorf("look for %s: %w", name, interpretError(err))
		}
		if !exists {
			return fmt.Errorf("no table or view %s", reconcile.Quote(name))
		}
	}
	var missing []string
	for _, c := range disputeColumns {
		if !slices.Contains(found, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s has no column %s (it needs %s)", reconcile.Quote(name), strings.Join(missing, ", "), strings.Join(disputeColumns, ", "))
	}
	return nil
}

const disputeSelect = `SELECT d.dispute_id::text, coalesce(d.order_no::text, ''), d.amount_minor::bigint, d.currency::text,
       coalesce(d.status::text, ''), d.opened_at::timestamptz FROM `

// RecordedDisputes returns the merchant's records of the channel's
// disputes among ids, by id.
func (db *DB) RecordedDisputes(ctx context.Context, name, channel string, day reconcile.BusinessDay, ids []string) (map[string]reconcile.Dispute, error) {
	out := map[string]reconcile.Dispute{}
	if len(ids) == 0 {
		return out, nil
	}
	err := db.disputes(ctx, name, day, func(d reconcile.Dispute) { out[d.ID] = d },
		disputeSelect+relation(name)+` d WHERE d.channel = $1 AND d.dispute_id = ANY($2::text[])`, channel, ids)
	return out, err
}

// OverdueDisputes returns the channel's recorded disputes whose window
// ends within the day (opened between window before the day's start and
// window before its end) that no current run's file has settled: the day
// each is told is the day it became overdue, once.
func (db *DB) OverdueDisputes(ctx context.Context, name, channel string, day reconcile.BusinessDay, window time.Duration) ([]reconcile.Dispute, error) {
	var out []reconcile.Dispute
	err := db.disputes(ctx, name, day, func(d reconcile.Dispute) { out = append(out, d) },
		disputeSelect+relation(name)+` d
 WHERE d.channel = $1 AND d.opened_at >= $2 AND d.opened_at < $3
   AND NOT EXISTS (SELECT 1 FROM dispute_events e JOIN runs r ON r.id = e.run_id
                    WHERE e.channel = $1 AND e.dispute_id = d.dispute_id::text AND e.business_date < $4
                      AND r.status = 'SUCCEEDED' AND r.superseded_by IS NULL)
 ORDER BY d.opened_at, d.dispute_id`, channel, day.Start().Add(-window), day.End().Add(-window), dateOf(day))
	return out, err
}

// disputes streams the merchant's records the query picks. A record the
// job cannot read as a dispute (no id, amount, currency or time; a
// negative amount; an id past MaxKeyBytes) stops the run, naming the
// relation and the dispute: its table is the merchant's to mend.
func (db *DB) disputes(ctx context.Context, name string, day reconcile.BusinessDay, fn func(reconcile.Dispute), sql string, args ...any) error {
	where := "our records of disputes (" + reconcile.Quote(name) + ")"
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", where, interpretError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, cur *string
			amount  *int64
			opened  *time.Time
			d       reconcile.Dispute
		)
		if err := rows.Scan(&id, &d.OrderNo, &amount, &cur, &d.Status, &opened); err != nil {
			return fmt.Errorf("%s: %w", where, interpretError(err))
		}
		if err := disputeFault(id, amount, cur, opened); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		d.ID, d.Amount, d.Currency, d.OpenedAt = *id, *amount, *cur, opened.In(day.Location)
		fn(d)
	}
	return interpretError(rows.Err())
}

// disputeFault says what makes a merchant's record of a dispute
// unreadable, nil when nothing does.
func disputeFault(id *string, amount *int64, cur *string, opened *time.Time) error {
	switch {
	case id == nil || *id == "":
		return fmt.Errorf("a dispute without a dispute_id")
	case len(*id) > reconcile.MaxKeyBytes:
		return fmt.Errorf("dispute_id of %d bytes; the job takes at most %d", len(*id), reconcile.MaxKeyBytes)
	case amount == nil:
		return fmt.Errorf("dispute %s: amount_minor is NULL", reconcile.Quote(*id))
	case *amount < 0:
		return fmt.Errorf("dispute %s: amount_minor %d is negative", reconcile.Quote(*id), *amount)
	case cur == nil || *cur == "":
		return fmt.Errorf("dispute %s: no currency", reconcile.Quote(*id))
	case opened == nil:
		return fmt.Errorf("dispute %s: opened_at is NULL", reconcile.Quote(*id))
	}
	return nil
}
