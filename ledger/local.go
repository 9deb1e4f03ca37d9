package ledger

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
)

// The local records of a run come in two queries, neither with a query
// per row: the day's window of the channel (a range scan of paid_at and
// refunded_at), then the few keys of the file that the window did not
// hold (a record settled on another day or through another channel).
// Sending every key of a file of millions of rows as an array would cost
// more than the whole window.

// The queries return, in scan order: kind, order and refund numbers,
// amount, currency, status, channel id, settled at, idempotency status,
// and for orders the customer and the creation time (NULL for refunds,
// and for orders when the local tables have no customer: see
// HasCustomers).

// customerColumns are an order's customer columns, or NULLs.
func customerColumns(customers bool) string {
	if customers {
		return "o.user_id, o.created_at"
	}
	return "NULL::bigint, NULL::timestamptz"
}

const noCustomer = "NULL::bigint, NULL::timestamptz"

func orderColumns(customers bool) string {
	return `'payment', o.order_no, '', o.amount_minor, o.currency, o.status,
       coalesce(o.channel_txn_id, ''), o.paid_at, coalesce(i.status, ''), ` + customerColumns(customers) + `
  FROM orders o
  LEFT JOIN idempotency_records i ON i.scope = 'payment' AND i.idem_key = o.order_no`
}

const refundColumns = `'refund', r.order_no, r.refund_no, r.amount_minor, r.currency, r.status,
       coalesce(r.channel_refund_id, ''), r.refunded_at, coalesce(i.status, ''), ` + noCustomer + `
  FROM refunds r
  LEFT JOIN idempotency_records i ON i.scope = 'refund' AND i.idem_key = r.refund_no`

// windowSQL: $1 channel, $2 day start, $3 day end; for a shard, $4 shards
// and $5 this one. It leaves the idempotency status out: joining a
// million idempotency records costs about as much as reading the window,
// and the status matters only for the few keys that do not simply match
// (see IdemStatuses).
func windowSQL(customers, sharded bool) string {
	orderShard, refundShard := "", ""
	if sharded {
		mine := shardSQL("o.order_no", "$4::bigint") + " = $5"
		orderShard = "\n   AND " + mine
		refundShard = "\n   AND " + shardSQL("r.refund_no", "$4::bigint") + " = $5"
		if customers {
			// The orders of this shard's customers held by other shards'
			// keys come too, marked, paid within a day of the date: the
			// customers' cases are this shard's (reconcile.Shard.HasCustomer),
			// and the file says which of them settled tonight, a record
			// paid just after midnight among them.
			theirs := shardSQL("o.user_id::text", "$4::bigint") + " = $5"
			return `
SELECT CASE WHEN ` + mine + ` THEN 'payment' ELSE 'other' END, o.order_no, '', o.amount_minor, o.currency, o.status,
       coalesce(o.channel_txn_id, ''), o.paid_at, '', ` + customerColumns(customers) + `
  FROM orders o
 WHERE o.channel = $1 AND o.paid_at >= $2::timestamptz - interval '1 day' AND o.paid_at < $3::timestamptz + interval '1 day'
   AND (` + mine + ` AND o.paid_at >= $2 AND o.paid_at < $3
        OR o.user_id IS NOT NULL AND ` + theirs + ` AND NOT ` + mine + `)` + refundsOfWindow(refundShard)
		}
	}
	return `
SELECT 'payment', o.order_no, '', o.amount_minor, o.currency, o.status,
       coalesce(o.channel_txn_id, ''), o.paid_at, '', ` + customerColumns(customers) + `
  FROM orders o
 WHERE o.channel = $1 AND o.paid_at >= $2 AND o.paid_at < $3` + orderShard + refundsOfWindow(refundShard)
}

// refundsOfWindow is the refunds' half of windowSQL.
func refundsOfWindow(refundShard string) string {
	return `
UNION ALL
SELECT 'refund', r.order_no, r.refund_no, r.amount_minor, r.currency, r.status,
       coalesce(r.channel_refund_id, ''), r.refunded_at, '', ` + noCustomer + `
  FROM refunds r
 WHERE r.channel = $1 AND r.refunded_at >= $2 AND r.refunded_at < $3` + refundShard
}

// keysSQL: $1 order keys, $2 refund keys, $3 channel, $4 day start, $5 day
// end. A record of the window is left out: the window query returned it.
func keysSQL(customers bool) string {
	return `
SELECT ` + orderColumns(customers) + `
 WHERE o.order_no = ANY($1::text[])
   AND NOT coalesce(o.channel = $3 AND o.paid_at >= $4 AND o.paid_at < $5, false)
UNION ALL
SELECT ` + refundColumns + `
 WHERE r.refund_no = ANY($2::text[])
   AND NOT coalesce(r.channel = $3 AND r.refunded_at >= $4 AND r.refunded_at < $5, false)`
}

// HasCustomers reports whether the local orders carry the customer
// (orders.user_id) and the time each was created (orders.created_at),
// which the same payment again under another order is found by. The
// reference schema has both; a deployment's view may leave them out, and
// the check is then off.
func (db *DB) HasCustomers(ctx context.Context) (bool, error) {
	var n int
	err := db.pool.QueryRow(ctx, `
SELECT count(*) FROM pg_attribute
 WHERE attrelid = to_regclass('orders') AND attname IN ('user_id', 'created_at') AND NOT attisdropped`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for orders.user_id: %w", interpretError(err))
	}
	return n == 2, nil
}

// IdemStatuses streams the status of the idempotency records of the given
// order keys (scope payment) and refund keys (scope refund) that have one.
func (db *DB) IdemStatuses(ctx context.Context, orderKeys, refundKeys []string,
	fn func(kind reconcile.Kind, key, status string) error) error {
	if len(orderKeys) == 0 && len(refundKeys) == 0 {
		return nil
	}
	if orderKeys == nil {
		orderKeys = []string{}
	}
	if refundKeys == nil {
		refundKeys = []string{}
	}
	rows, err := db.pool.Query(ctx, `
SELECT scope, idem_key, status FROM idempotency_records
 WHERE (scope = 'payment' AND idem_key = ANY($1::text[])) OR (scope = 'refund' AND idem_key = ANY($2::text[]))`,
		orderKeys, refundKeys)
	if err != nil {
		return fmt.Errorf("idempotency records: %w", interpretError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var scope, key, status string
		if err := rows.Scan(&scope, &key, &status); err != nil {
			return fmt.Errorf("idempotency records: %w", interpretError(err))
		}
		kind := reconcile.KindPayment
		if scope == "refund" {
			kind = reconcile.KindRefund
		}
		if err := fn(kind, key, status); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("idempotency records: %w", interpretError(err))
	}
	return nil
}

// LoadWindow streams the channel's orders paid and refunds refunded on
// day, of the shard's keys, as rows that borrow the driver's buffers.
// Their IdemStatus is empty: ask IdemStatuses for the keys that need it.
func (db *DB) LoadWindow(ctx context.Context, channel string, day reconcile.BusinessDay, shard reconcile.Shard,
	fn func(*reconcile.LocalRow) error) (int, error) {
	customers, err := db.HasCustomers(ctx)
	if err != nil {
		return 0, err
	}
	if shard.Whole() {
		return db.streamLocal(ctx, channel, day, windowSQL(customers, false), fn, channel, day.Start(), day.End())
	}
	return db.streamLocal(ctx, channel, day, windowSQL(customers, true), fn, channel, day.Start(), day.End(), shard.Count, shard.Index)
}

// LoadKeys streams the records with the given keys that are not in the
// day's window of the channel: what a run adds to the window (LoadWindow)
// for the keys of its file the window did not hold.
func (db *DB) LoadKeys(ctx context.Context, channel string, day reconcile.BusinessDay,
	orderKeys, refundKeys []string, fn func(*reconcile.LocalRow) error) (int, error) {
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
	customers, err := db.HasCustomers(ctx)
	if err != nil {
		return 0, err
	}
	return db.streamLocal(ctx, channel, day, keysSQL(customers), fn, orderKeys, refundKeys, channel, day.Start(), day.End())
}

// pgEpoch is where PostgreSQL's binary timestamps count from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// streamLocal reads the rows in binary and hands them over without
// allocating per row: the text columns are the driver's bytes, the amount
// and the time are decoded from their wire form.
func (db *DB) streamLocal(ctx context.Context, channel string, day reconcile.BusinessDay, sql string,
	fn func(*reconcile.LocalRow) error, args ...any) (int, error) {
	loc := day.Location
	if loc == nil {
		loc = time.UTC
	}
	args = append([]any{pgx.QueryResultFormats{pgx.BinaryFormatCode}}, args...)
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return 0, fmt.Errorf("load local records of %s %s: %w", channel, day, interpretError(err))
	}
	defer rows.Close()
	n := 0
	var r reconcile.LocalRow
	for rows.Next() {
		v := rows.RawValues()
		if len(v) != 11 || len(v[3]) != 8 {
			return n, fmt.Errorf("load local records of %s %s: unexpected row shape", channel, day)
		}
		r.Kind, r.OtherShard = reconcile.KindPayment, string(v[0]) == "other"
		if string(v[0]) == "refund" {
			r.Kind = reconcile.KindRefund
		}
		r.OrderNo, r.RefundNo, r.Currency, r.Status, r.ChannelTxnID, r.IdemStatus = v[1], v[2], v[4], v[5], v[6], v[8]
		r.Amount = int64(binary.BigEndian.Uint64(v[3]))
		r.SettledAt = time.Time{}
		if len(v[7]) == 8 {
			us := int64(binary.BigEndian.Uint64(v[7]))
			r.SettledAt = pgEpoch.Add(time.Duration(us) * time.Microsecond).In(loc)
		}
		r.Customer, r.HasCustomer, r.CreatedAt = 0, false, time.Time{}
		if len(v[9]) == 8 {
			r.Customer, r.HasCustomer = int64(binary.BigEndian.Uint64(v[9])), true
		}
		if len(v[10]) == 8 {
			us := int64(binary.BigEndian.Uint64(v[10]))
			r.CreatedAt = pgEpoch.Add(time.Duration(us) * time.Microsecond).In(loc)
		}
		n++
		if err := fn(&r); err != nil {
			return n, err
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("load local records of %s %s: %w", channel, day, interpretError(err))
	}
	return n, nil
}
