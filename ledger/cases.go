package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
)

// Money that moves twice under new keys is found by order and by
// customer, not by key: these queries give the matcher the other refunds
// of the orders a refund touches tonight, and a customer's orders settled
// on earlier nights.

// rowCategories are the findings that stand for a channel's refund row no
// local SUCCEEDED refund confirmed: what an earlier night's file refunded
// that only its findings remember (an unrecognized refund is one without
// our refund number that nothing linked, an order_mismatch one of ours
// the channel settled on another order).
const rowCategories = `('missing_local', 'amount_mismatch', 'status_mismatch', 'duplicate_refund', 'unrecognized', 'order_mismatch')`

// dayCasesSQL: $1 channel, $2 day start, $3 day end, $4 the business
// date, $5 shards, $6 this shard ($5 = 1: every order). The orders of the
// day's local refunds with another refund of any date or status, with a
// refund an earlier night's file alone knew, or with a dispute an earlier
// night's file carried (rule 14): found from the refunds, findings and
// events alone. A single refund larger than its order is the one case
// that needs the order, and the matcher checks it against the order it
// holds (matcher.RefundOrders), so the day's refunds are not joined with a
// table of millions of orders: that join was a scan of the whole orders
// index, seconds of the server's time while the file is read.
//
// "Another refund" is asked of each of the day's refunds (EXISTS), not
// by counting every refund of the orders the day touches: the count
// hashed all of the channel's refunds, a cost that grew with the refunds'
// history rather than the night (3M bench, 297,000 of the day's refunds
// against 898,500 in all: 1.0-1.1 s against 0.7 s in EXPLAIN ANALYZE).
// The planner probes the refunds' order index or hashes them, by sizes.
var dayCasesSQL = `
WITH day AS MATERIALIZED (
    SELECT r.order_no, r.refund_no FROM refunds r
     WHERE r.channel = $1 AND r.refunded_at >= $2 AND r.refunded_at < $3
       AND ($5::bigint = 1 OR ` + shardSQL("r.order_no", "$5::bigint") + ` = $6)
)
SELECT d.order_no FROM day d
 WHERE EXISTS (SELECT 1 FROM refunds x WHERE x.order_no = d.order_no AND x.refund_no <> d.refund_no)
UNION
SELECT d.order_no FROM day d
 WHERE d.order_no IN (
    SELECT f.order_no FROM findings f
     WHERE f.channel = $1 AND f.kind = 'refund' AND f.category IN ` + rowCategories + `
       AND f.business_date < $4 AND f.state <> 'SUPERSEDED' AND f.order_no IS NOT NULL)
UNION
SELECT d.order_no FROM day d
 WHERE EXISTS (SELECT 1 FROM dispute_events e JOIN runs r ON r.id = e.run_id
                WHERE e.channel = $1 AND e.order_no = d.order_no AND e.business_date < $4
                  AND r.status = 'SUCCEEDED' AND r.superseded_by IS NULL)`

// orderRefundsSQL: $1 the orders, $2 shards, $3 this shard. Each order
// with its customer (or NULL) and every local refund of it, whatever its
// date and status. The orders are joined as a list, not matched by
// ANY: at 30,000 orders (a night's chargebacks) the planner's bitmap of
// the orders' index and hash of every refund took three times as long
// as a lookup of each.
func orderRefundsSQL(customers bool) string {
	customer := "NULL::bigint"
	if customers {
		customer = "o.user_id"
	}
	return `
SELECT o.order_no, o.amount_minor, o.currency, o.status, coalesce(o.channel_txn_id, ''), ` + customer + `,
       x.refund_no, x.amount_minor, x.currency, x.status, coalesce(x.channel_refund_id, ''), x.refunded_at
  FROM (SELECT DISTINCT unnest($1::text[])) AS a(order_no)
  JOIN orders o ON o.order_no = a.order_no
  LEFT JOIN refunds x ON x.order_no = o.order_no
 WHERE ($2::bigint = 1 OR ` + shardSQL("o.order_no", "$2::bigint") + ` = $3)
 ORDER BY o.order_no, x.refund_no`
}

// earlierRefundsSQL: $1 channel, $2 orders, $3 the business date. The
// refund rows earlier nights' findings remember, and the cases they told
// (category over_refund or suspected_duplicate_refund). The orders are
// joined as a list, as in orderRefundsSQL: matched by ANY, the planner
// scanned every finding in parallel against the array (128 ms for 12,500
// orders in one 1M bench night's statement log; joined, 73–83 ms in
// EXPLAIN ANALYZE on the same database, and which plan a night gets
// varies with the findings' statistics).
const earlierRefundsSQL = `
SELECT f.category, f.order_no, coalesce(f.refund_no, ''), coalesce(f.channel_txn_id, ''), f.channel_amount,
       coalesce(f.currency, ''), coalesce(f.channel_status, ''), f.occurred_at, coalesce(f.line, 0)
  FROM (SELECT DISTINCT unnest($2::text[])) AS a(order_no)
  JOIN findings f ON f.channel = $1 AND f.order_no = a.order_no
 WHERE (f.kind = 'refund' AND f.category IN ` + rowCategories + `
        OR f.category IN ('over_refund', 'suspected_duplicate_refund'))
   AND f.business_date < $3 AND f.state <> 'SUPERSEDED' AND f.channel_amount IS NOT NULL
 ORDER BY f.order_no, f.occurred_at`

// DayOrderRefunds streams, for the orders of the channel's local refunds
// of the day where something can be wrong whatever tonight's file says
// (more than one refund, a refund only an earlier night's file knew), the
// order with every local refund of it and the refund rows of earlier
// nights that no local record confirmed. It needs nothing of the file,
// so a run asks it while the file is read. Of a shard, only the orders the
// shard owns.
func (db *DB) DayOrderRefunds(ctx context.Context, channel string, day reconcile.BusinessDay, shard reconcile.Shard) ([]reconcile.OrderRefunds, error) {
	count, index := shardArgs(shard)
	rows, err := db.pool.Query(ctx, dayCasesSQL, channel, day.Start(), day.End(), dateOf(day), count, index)
	if err != nil {
		return nil, fmt.Errorf("refunds of the day's orders: %w", interpretError(err))
	}
	orders, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("refunds of the day's orders: %w", interpretError(err))
	}
	return db.OrderRefunds(ctx, channel, day, shard, orders, nil)
}

// shardArgs are a shard's count and index as the queries take them: 1
// and 0 for every order.
func shardArgs(shard reconcile.Shard) (count, index int) {
	if shard.Whole() {
		return 1, 0
	}
	return shard.Count, shard.Index
}

// OrderRefunds is DayOrderRefunds for the given orders, whatever they
// show: the orders of tonight's refund rows whose refund is not one of
// the day's records, or that the matcher cannot vouch for
// (matcher.RefundOrders), and the orders of tonight's chargebacks. The
// answers are appended to dst, each written once where it is kept: a
// night with many chargebacks asks of tens of thousands of orders.
func (db *DB) OrderRefunds(ctx context.Context, channel string, day reconcile.BusinessDay, shard reconcile.Shard,
	orders []string, dst []reconcile.OrderRefunds) ([]reconcile.OrderRefunds, error) {
	if len(orders) == 0 {
		return dst, nil
	}
	count, index := shardArgs(shard)
	customers, err := db.HasCustomers(ctx)
	if err != nil {
		return dst, err
	}
	rows, err := db.pool.Query(ctx, orderRefundsSQL(customers), orders, count, index)
	if err != nil {
		return dst, fmt.Errorf("refunds of tonight's orders: %w", interpretError(err))
	}
	from := len(dst)
	at := make(map[string]int, len(orders)) // an order's place in dst[from:]
	// Scanned into once: the row's text is new each time, its holders not.
	var (
		o                         reconcile.LocalRecord
		refundNo, cur, status, id *string
		amount, customer          *int64
		refundedAt                *time.Time
	)
	for rows.Next() {
		o = reconcile.LocalRecord{Kind: reconcile.KindPayment}
		if err := rows.Scan(&o.OrderNo, &o.Amount, &o.Currency, &o.Status, &o.ChannelTxnID, &customer,
			&refundNo, &amount, &cur, &status, &id, &refundedAt); err != nil {
			rows.Close()
			return dst, fmt.Errorf("refunds of tonight's orders: %w", interpretError(err))
		}
		if customer != nil {
			o.Customer, o.HasCustomer = *customer, true
		}
		i, ok := at[o.OrderNo]
		if !ok {
			i = len(dst) - from
			at[o.OrderNo] = i
			dst = append(dst, reconcile.OrderRefunds{Order: o})
		}
		or := &dst[from+i]
		if refundNo == nil {
			continue // an order without local refunds
		}
		r := reconcile.LocalRecord{Kind: reconcile.KindRefund, OrderNo: o.OrderNo, RefundNo: *refundNo,
			Amount: *amount, Currency: *cur, Status: *status, ChannelTxnID: *id}
		if refundedAt != nil {
			r.SettledAt = refundedAt.In(day.Location)
		}
		or.Refunds = append(or.Refunds, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return dst, fmt.Errorf("refunds of tonight's orders: %w", interpretError(err))
	}
	return dst, db.earlierRefunds(ctx, channel, day, dst[from:], at)
}

// earlierRefunds adds to each order (at its place in found) the refund
// rows of earlier nights' files that only their findings remember, and
// their dispute events.
func (db *DB) earlierRefunds(ctx context.Context, channel string, day reconcile.BusinessDay, found []reconcile.OrderRefunds, at map[string]int) error {
	if len(found) == 0 {
		return nil
	}
	orders := make([]string, len(found))
	for i := range found {
		orders[i] = found[i].Order.OrderNo
	}
	byOrder := func(order string) *reconcile.OrderRefunds { return &found[at[order]] }
	events, err := db.orderEvents(ctx, channel, day, orders)
	if err != nil {
		return err
	}
	for _, e := range events {
		o := byOrder(e.OrderNo)
		o.Disputes = append(o.Disputes, e)
	}
	rows, err := db.pool.Query(ctx, earlierRefundsSQL, channel, orders, dateOf(day))
	if err != nil {
		return fmt.Errorf("earlier nights' refunds: %w", interpretError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var (
			tx               reconcile.Transaction
			category, status string
			occurredAt       *time.Time
		)
		tx.Kind = reconcile.KindRefund
		if err := rows.Scan(&category, &tx.OrderNo, &tx.RefundNo, &tx.ChannelTxnID, &tx.Amount, &tx.Currency, &status,
			&occurredAt, &tx.Line); err != nil {
			return fmt.Errorf("earlier nights' refunds: %w", interpretError(err))
		}
		tx.Status = reconcile.TxnStatus(status)
		if occurredAt != nil {
			tx.OccurredAt = occurredAt.In(day.Location)
		}
		o := byOrder(tx.OrderNo)
		switch reconcile.Category(category) {
		case reconcile.OverRefund:
			o.Reported = max(o.Reported, tx.Amount) // its Channel Amount is the total it told
		case reconcile.SuspectedDuplicateRefund:
			o.Suspected = append(o.Suspected, tx.RefundNo)
		default:
			o.Earlier = append(o.Earlier, tx)
		}
	}
	return interpretError(rows.Err())
}

// earlierOrdersSQL: $1 customers, $2 created, $3 amounts, $4 currencies,
// $5 order numbers (of tonight's orders, one each), $6 the window, $7
// channel, $8 the day's start and the grace after it. A paid order of the
// channel settled on an earlier night (paid before the day, or within the
// cut-off's grace after its start: a record written just after midnight
// of a row in the night before's file) that no night reported missing
// from the channel's file.
const earlierOrdersSQL = `
SELECT DISTINCT o.order_no, o.amount_minor, o.currency, o.status, coalesce(o.channel_txn_id, ''),
       o.paid_at, o.user_id, o.created_at
  FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::text[], $5::text[])
       AS e(customer, created, amount, currency, order_no)
  JOIN orders o ON o.user_id = e.customer AND o.amount_minor = e.amount AND o.currency = e.currency
               AND o.created_at >= e.created - $6::interval AND o.created_at <= e.created + $6::interval
               AND o.order_no <> e.order_no
 WHERE o.channel = $7 AND o.paid_at < $8 AND o.status IN ('PAID', 'SHIPPED', 'REFUNDING', 'REFUNDED')
   AND NOT EXISTS (SELECT 1 FROM findings f
                    WHERE f.channel = $7 AND f.order_no = o.order_no AND f.kind = 'payment'
                      AND f.category = 'missing_channel' AND f.state <> 'SUPERSEDED')
 ORDER BY o.order_no`

// EarlierOrders streams the paid orders of the channel settled on an
// earlier night that belong to the customer of one of early (orders of
// tonight, see matcher.EarlyOrders), for the same amount and currency,
// created within window of it; grace is the channel's cut-off window.
func (db *DB) EarlierOrders(ctx context.Context, channel string, day reconcile.BusinessDay, window, grace time.Duration,
	early []reconcile.LocalRecord, fn func(reconcile.LocalRecord) error) error {
	if len(early) == 0 || window <= 0 {
		return nil
	}
	n := len(early)
	customers, created, amounts := make([]int64, n), make([]time.Time, n), make([]int64, n)
	currencies, orders := make([]string, n), make([]string, n)
	for i, e := range early {
		customers[i], created[i], amounts[i], currencies[i], orders[i] = e.Customer, e.CreatedAt, e.Amount, e.Currency, e.OrderNo
	}
	rows, err := db.pool.Query(ctx, earlierOrdersSQL, customers, created, amounts, currencies, orders,
		window, channel, day.Start().Add(grace))
	if err != nil {
		return fmt.Errorf("a customer's earlier orders: %w", interpretError(err))
	}
	defer rows.Close()
	for rows.Next() {
		o := reconcile.LocalRecord{Kind: reconcile.KindPayment, HasCustomer: true}
		var paidAt *time.Time
		if err := rows.Scan(&o.OrderNo, &o.Amount, &o.Currency, &o.Status, &o.ChannelTxnID, &paidAt,
			&o.Customer, &o.CreatedAt); err != nil {
			return fmt.Errorf("a customer's earlier orders: %w", interpretError(err))
		}
		if paidAt != nil {
			o.SettledAt = paidAt.In(day.Location)
		}
		o.CreatedAt = o.CreatedAt.In(day.Location)
		if err := fn(o); err != nil {
			return err
		}
	}
	return interpretError(rows.Err())
}

// RefundsByChannelID returns the channel's refunds whose channel refund
// id is one of ids: for the refund rows of a file that do not carry our
// refund number (see matcher.UnkeyedRefunds). Each comes with its
// number, order and that id (as ChannelTxnID).
func (db *DB) RefundsByChannelID(ctx context.Context, channel string, ids []string) ([]reconcile.LocalRecord, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `
SELECT refund_no, order_no, channel_refund_id FROM refunds
 WHERE channel = $1 AND channel_refund_id = ANY($2::text[])
 ORDER BY refund_no`, channel, ids)
	if err != nil {
		return nil, fmt.Errorf("refunds by their channel id: %w", interpretError(err))
	}
	defer rows.Close()
	var out []reconcile.LocalRecord
	for rows.Next() {
		r := reconcile.LocalRecord{Kind: reconcile.KindRefund}
		if err := rows.Scan(&r.RefundNo, &r.OrderNo, &r.ChannelTxnID); err != nil {
			return nil, fmt.Errorf("refunds by their channel id: %w", interpretError(err))
		}
		// The number goes on the file's row, which holds keys of at most
		// MaxKeyBytes, as the file's own do.
		if len(r.RefundNo) > reconcile.MaxKeyBytes || len(r.OrderNo) > reconcile.MaxKeyBytes {
			return nil, fmt.Errorf("refunds by their channel id: the refund of channel refund id %s has a refund_no of %d bytes and an order_no of %d; the job takes at most %d",
				reconcile.Quote(r.ChannelTxnID), len(r.RefundNo), len(r.OrderNo), reconcile.MaxKeyBytes)
		}
		out = append(out, r)
	}
	return out, interpretError(rows.Err())
}

// ordersByChannelIDSQL: $1 channel, $2 channel ids. The ids are joined as
// a table, one index probe each, as the idempotency statuses are.
const ordersByChannelIDSQL = `
SELECT o.order_no, o.channel_txn_id
  FROM unnest($2::text[]) AS k(id) JOIN orders o ON o.channel_txn_id = k.id
 WHERE o.channel = $1
 ORDER BY o.order_no`

// OrdersByChannelID returns the channel's orders whose channel_txn_id is
// one of ids, each with its number and that id (as ChannelTxnID): for
// the payment rows that do not simply match (see matcher.PaymentIDs),
// whose id may be our record of another order.
func (db *DB) OrdersByChannelID(ctx context.Context, channel string, ids []string) ([]reconcile.LocalRecord, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, ordersByChannelIDSQL, channel, ids)
	if err != nil {
		return nil, fmt.Errorf("orders by their channel id: %w", interpretError(err))
	}
	defer rows.Close()
	var out []reconcile.LocalRecord
	for rows.Next() {
		o := reconcile.LocalRecord{Kind: reconcile.KindPayment}
		if err := rows.Scan(&o.OrderNo, &o.ChannelTxnID); err != nil {
			return nil, fmt.Errorf("orders by their channel id: %w", interpretError(err))
		}
		out = append(out, o)
	}
	return out, interpretError(rows.Err())
}
