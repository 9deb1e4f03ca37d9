package ledger

import (
	"context"
	"fmt"
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

const eventSelect = `
SELECT e.kind, e.dispute_id, e.order_no, e.refund_no, e.payment_id, e.channel_txn_id, e.amount_minor, e.currency,
       e.fee_milli, e.occurred_at, e.line, e.reason, e.raw_kind` + currentEvents

var eventColumns = []string{
	"run_id", "channel", "business_date", "kind", "dispute_id", "order_no", "refund_no", "payment_id",
	"channel_txn_id", "amount_minor", "currency", "fee_milli", "occurred_at", "line", "reason", "raw_kind",
}

// keepEvents writes the run's new dispute events.
func keepEvents(ctx context.Context, tx pgx.Tx, run reconcile.Run, events []reconcile.Transaction) error {
	if len(events) == 0 {
		return nil
	}
	date := dateOf(run.Day)
	rows := make([][]any, len(events))
	for i, e := range events {
		rows[i] = []any{run.ID, run.Channel, date, string(e.Kind), e.DisputeID, e.OrderNo, e.RefundNo, e.PaymentID,
			e.ChannelTxnID, e.Amount, e.Currency, e.FeeMilli, nullTime(e.OccurredAt), e.Line, e.Reason, e.RawKind}
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"dispute_events"}, eventColumns, pgx.CopyFromRows(rows))
	return err
}

// settleDisputes writes the standing tonight's events gave the chargeback
// findings of earlier dates, by dispute. The standing is the channel's
// word: the finding's state and version, a reviewer's, are left alone.
func settleDisputes(ctx context.Context, tx pgx.Tx, run reconcile.Run, status map[string]string) error {
	if len(status) == 0 {
		return nil
	}
	ids, words := make([]string, 0, len(status)), make([]string, 0, len(status))
	for id, s := range status {
		ids, words = append(ids, id), append(words, s)
	}
	_, err := tx.Exec(ctx, `
UPDATE findings f SET dispute_status = u.status
  FROM unnest($2::text[], $3::text[]) AS u(id, status)
 WHERE f.channel = $1 AND f.dispute_id = u.id AND f.category = 'chargeback'
   AND f.business_date < $4 AND f.state <> 'SUPERSEDED'`, run.Channel, ids, words, dateOf(run.Day))
	return err
}

// DisputeEvents returns the events earlier nights kept of the disputes.
func (db *DB) DisputeEvents(ctx context.Context, channel string, day reconcile.BusinessDay, disputes []string) ([]reconcile.Transaction, error) {
	if len(disputes) == 0 {
		return nil, nil
	}
	return db.events(ctx, day, eventSelect+` AND e.dispute_id = ANY($3::text[]) ORDER BY e.occurred_at, e.line`,
		channel, dateOf(day), disputes)
}

// orderEvents returns the events earlier nights kept of the orders.
func (db *DB) orderEvents(ctx context.Context, channel string, day reconcile.BusinessDay, orders []string) ([]reconcile.Transaction, error) {
	return db.events(ctx, day, eventSelect+` AND e.order_no = ANY($3::text[]) ORDER BY e.occurred_at, e.line`,
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

// DisputedOrders returns, of the orders, those whose chargebacks of
// earlier nights still stand (more charged back than reversed), each
// with a dispute of it: their duplicates are not reversed by themselves
// (matcher.Known.Disputed).
func (db *DB) DisputedOrders(ctx context.Context, channel string, day reconcile.BusinessDay, orders []string) (map[string]string, error) {
	if len(orders) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `
SELECT e.order_no, max(e.dispute_id)`+currentEvents+`
   AND e.order_no = ANY($3::text[]) AND e.kind <> 'refund_reversal'
 GROUP BY e.order_no
HAVING sum(CASE e.kind WHEN 'chargeback_reversal' THEN -e.amount_minor ELSE e.amount_minor END) > 0`,
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
