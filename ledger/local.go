package ledger

import (
	"context"
	"fmt"
	"time"

	"reconcile"
)

// The local records of a run come in two queries, neither with a query
// per row: the day's window of the channel (a range scan of paid_at and
// refunded_at), then the few keys of the file that the window did not
// hold (a record settled on another day or through another channel).
// Sending every key of a file of millions of rows as an array would cost
// more than the whole window.

// localColumns are the columns both queries return, in scan order.
const orderColumns = `'payment', o.order_no, '', o.amount_minor, o.currency, o.status,
       coalesce(o.channel_txn_id, ''), o.paid_at, coalesce(i.status, '')
  FROM orders o
  LEFT JOIN idempotency_records i ON i.scope = 'payment' AND i.idem_key = o.order_no`

const refundColumns = `'refund', r.order_no, r.refund_no, r.amount_minor, r.currency, r.status,
       coalesce(r.channel_refund_id, ''), r.refunded_at, coalesce(i.status, '')
  FROM refunds r
  LEFT JOIN idempotency_records i ON i.scope = 'refund' AND i.idem_key = r.refund_no`

// windowSQL: $1 channel, $2 day start, $3 day end.
const windowSQL = `
SELECT ` + orderColumns + `
 WHERE o.channel = $1 AND o.paid_at >= $2 AND o.paid_at < $3
UNION ALL
SELECT ` + refundColumns + `
 WHERE r.channel = $1 AND r.refunded_at >= $2 AND r.refunded_at < $3`

// keysSQL: $1 order keys, $2 refund keys, $3 channel, $4 day start, $5 day
// end. A record of the window is left out: the window query returned it.
const keysSQL = `
SELECT ` + orderColumns + `
 WHERE o.order_no = ANY($1::text[])
   AND NOT coalesce(o.channel = $3 AND o.paid_at >= $4 AND o.paid_at < $5, false)
UNION ALL
SELECT ` + refundColumns + `
 WHERE r.refund_no = ANY($2::text[])
   AND NOT coalesce(r.channel = $3 AND r.refunded_at >= $4 AND r.refunded_at < $5, false)`

// LoadLocal streams the local records relevant to reconciling channel on
// day: the channel's orders paid and refunds refunded on day, and every
// order and refund whose key is in orderKeys or refundKeys, whatever its
// date or channel. Each record appears once and carries the status of its
// idempotency record. fn is called for each row as it arrives; LoadLocal
// returns how many there were.
func (db *DB) LoadLocal(ctx context.Context, channel string, day reconcile.BusinessDay,
	orderKeys, refundKeys []string, fn func(reconcile.LocalRecord) error) (int, error) {
	n, err := db.streamLocal(ctx, channel, day, windowSQL, fn, channel, day.Start(), day.End())
	if err != nil {
		return n, err
	}
	m, err := db.LoadLocalKeys(ctx, channel, day, orderKeys, refundKeys, fn)
	return n + m, err
}

// LoadLocalKeys streams the records with the given keys that are not in
// the day's window of the channel: what LoadLocal adds to the window.
func (db *DB) LoadLocalKeys(ctx context.Context, channel string, day reconcile.BusinessDay,
	orderKeys, refundKeys []string, fn func(reconcile.LocalRecord) error) (int, error) {
	if len(orderKeys) == 0 && len(refundKeys) == 0 {
		return 0, nil
	}
	// A nil slice would be sent as NULL, and = ANY(NULL) is never true,
	// which is right, but an empty array says so plainly.
	if orderKeys == nil {
		orderKeys = []string{}
	}
	if refundKeys == nil {
		refundKeys = []string{}
	}
	return db.streamLocal(ctx, channel, day, keysSQL, fn, orderKeys, refundKeys, channel, day.Start(), day.End())
}

func (db *DB) streamLocal(ctx context.Context, channel string, day reconcile.BusinessDay, sql string,
	fn func(reconcile.LocalRecord) error, args ...any) (int, error) {
	loc := day.Location
	if loc == nil {
		loc = time.UTC
	}
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return 0, fmt.Errorf("load local records of %s %s: %w", channel, day, interpretError(err))
	}
	defer rows.Close()
	n := 0
	var kind string
	var settledAt *time.Time
	for rows.Next() {
		var r reconcile.LocalRecord
		if err := rows.Scan(&kind, &r.OrderNo, &r.RefundNo, &r.Amount, &r.Currency, &r.Status,
			&r.ChannelTxnID, &settledAt, &r.IdemStatus); err != nil {
			return n, fmt.Errorf("load local records of %s %s: %w", channel, day, interpretError(err))
		}
		r.Kind = reconcile.Kind(kind)
		if settledAt != nil {
			r.SettledAt = settledAt.In(loc)
		}
		n++
		if err := fn(r); err != nil {
			return n, err
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("load local records of %s %s: %w", channel, day, interpretError(err))
	}
	return n, nil
}
