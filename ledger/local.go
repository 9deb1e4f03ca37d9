package ledger

import (
	"context"
	"fmt"
	"time"

	"reconcile"
)

// loadLocalSQL selects the keys first, deduplicated by UNION, so a record
// that qualifies both by key and by date comes back once; each branch of
// the UNIONs can use its own index (the primary key for = ANY, paid_at or
// refunded_at for the range).
//
// SeenBefore looks in the memory of earlier files: a record settled just
// after one day's end and matched by that day's file is not missing from
// the next day's.
//
// $1 order keys, $2 refund keys, $3 channel, $4 day start, $5 day end,
// $6 the business date.
const loadLocalSQL = `
WITH order_keys AS (
    SELECT order_no FROM orders WHERE order_no = ANY($1::text[])
    UNION
    SELECT order_no FROM orders
     WHERE channel = $3 AND paid_at >= $4 AND paid_at < $5
), refund_keys AS (
    SELECT refund_no FROM refunds WHERE refund_no = ANY($2::text[])
    UNION
    SELECT refund_no FROM refunds
     WHERE channel = $3 AND refunded_at >= $4 AND refunded_at < $5
)
SELECT 'payment', o.order_no, '', o.amount_minor, o.currency, o.status,
       coalesce(o.channel_txn_id, ''), o.paid_at, coalesce(i.status, ''),
       EXISTS (SELECT 1 FROM settled_rows s WHERE s.channel = $3 AND s.kind = 'payment'
                  AND s.key = o.order_no AND s.business_date < $6::date)
  FROM order_keys k
  JOIN orders o ON o.order_no = k.order_no
  LEFT JOIN idempotency_records i ON i.scope = 'payment' AND i.idem_key = o.order_no
UNION ALL
SELECT 'refund', r.order_no, r.refund_no, r.amount_minor, r.currency, r.status,
       coalesce(r.channel_refund_id, ''), r.refunded_at, coalesce(i.status, ''),
       EXISTS (SELECT 1 FROM settled_rows s WHERE s.channel = $3 AND s.kind = 'refund'
                  AND s.key = r.refund_no AND s.business_date < $6::date)
  FROM refund_keys k
  JOIN refunds r ON r.refund_no = k.refund_no
  LEFT JOIN idempotency_records i ON i.scope = 'refund' AND i.idem_key = r.refund_no`

// LoadLocal streams, with one query, the local records relevant to
// reconciling channel on day: every order and refund whose key is in
// orderKeys or refundKeys (whatever its date or channel), and the channel's
// orders paid and refunds refunded on day. Each record appears once and
// carries the status of its idempotency record. fn is called for each row
// as it arrives; LoadLocal returns how many there were.
func (db *DB) LoadLocal(ctx context.Context, channel string, day reconcile.BusinessDay,
	orderKeys, refundKeys []string, fn func(reconcile.LocalRecord) error) (int, error) {
	// A nil slice would be sent as NULL, and = ANY(NULL) is never true,
	// which is right, but an empty array says so plainly.
	if orderKeys == nil {
		orderKeys = []string{}
	}
	if refundKeys == nil {
		refundKeys = []string{}
	}
	loc := day.Location
	if loc == nil {
		loc = time.UTC
	}
	rows, err := db.pool.Query(ctx, loadLocalSQL, orderKeys, refundKeys, channel, day.Start(), day.End(), dateOf(day))
	if err != nil {
		return 0, fmt.Errorf("load local records of %s %s: %w", channel, day, interpretError(err))
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			r         reconcile.LocalRecord
			kind      string
			settledAt *time.Time
		)
		if err := rows.Scan(&kind, &r.OrderNo, &r.RefundNo, &r.Amount, &r.Currency, &r.Status,
			&r.ChannelTxnID, &settledAt, &r.IdemStatus, &r.SeenBefore); err != nil {
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
