package ledger

import (
	"context"
	"encoding/binary"
	"errors"
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

// Each query returns orders or refunds, never both, and only the columns
// the matcher reads: PostgreSQL's cost of sending a row grows by about a
// tenth with each column, and ten million rows were sent with three that
// said nothing (the kind, an empty refund number, an empty idempotency
// status). An order row is order number, amount, currency, status,
// channel id, paid at, customer and creation time (NULLs when the local
// tables have no customer: see HasCustomers); a refund row is order and
// refund numbers, amount, currency, status, channel refund id and
// refunded at. The keys query adds the idempotency status; the sharded
// window with customers adds whether the order is another shard's.

// shape says which column holds what in the rows of one query.
type shape struct {
	kind                           reconcile.Kind
	refund                         int // -1: an order row, without one
	amount, cur, status, id, at    int
	customer, created, idem, other int // -1: not in the query
	width                          int
}

var (
	orderShape  = shape{kind: reconcile.KindPayment, refund: -1, amount: 1, cur: 2, status: 3, id: 4, at: 5, customer: 6, created: 7, idem: -1, other: -1, width: 8}
	refundShape = shape{kind: reconcile.KindRefund, refund: 1, amount: 2, cur: 3, status: 4, id: 5, at: 6, customer: -1, created: -1, idem: -1, other: -1, width: 7}
)

// withIdem is the shape with the idempotency status in one more column.
func (s shape) withIdem() shape { s.idem, s.width = s.width, s.width+1; return s }

// withOther is the shape with "another shard's" in one more column.
func (s shape) withOther() shape { s.other, s.width = s.width, s.width+1; return s }

// customerColumns are an order's customer columns, or NULLs.
func customerColumns(customers bool) string {
	if customers {
		return "o.user_id, o.created_at"
	}
	return "NULL::bigint, NULL::timestamptz"
}

func orderColumns(customers bool) string {
	return `o.order_no, o.amount_minor, o.currency, o.status, o.channel_txn_id, o.paid_at, ` + customerColumns(customers)
}

const refundColumns = `r.order_no, r.refund_no, r.amount_minor, r.currency, r.status, r.channel_refund_id, r.refunded_at`

// query is one statement of a load and the shape of its rows.
type query struct {
	sql   string
	shape shape
	args  []any
}

// windowQueries: $1 channel, $2 day start, $3 day end; for a shard, $4
// shards and $5 this one. They leave the idempotency status out: joining
// a million idempotency records costs about as much as reading the
// window, and the status matters only for the few keys that do not simply
// match (see IdemStatuses).
func windowQueries(customers, sharded bool) (orders, refunds query) {
	orders = query{sql: `
SELECT ` + orderColumns(customers) + `
  FROM orders o
 WHERE o.channel = $1 AND o.paid_at >= $2 AND o.paid_at < $3`, shape: orderShape}
	refunds = query{sql: `
SELECT ` + refundColumns + `
  FROM refunds r
 WHERE r.channel = $1 AND r.refunded_at >= $2 AND r.refunded_at < $3`, shape: refundShape}
	if !sharded {
		return orders, refunds
	}
	mine := shardSQL("o.order_no", "$4::bigint") + " = $5"
	orders.sql += "\n   AND " + mine
	refunds.sql += "\n   AND " + shardSQL("r.refund_no", "$4::bigint") + " = $5"
	if customers {
		// The orders of this shard's customers held by other shards'
		// keys come too, marked, paid within a day of the date: the
		// customers' cases are this shard's (reconcile.Shard.HasCustomer),
		// and the file says which of them settled tonight, a record paid
		// just after midnight among them.
		theirs := shardSQL("o.user_id::text", "$4::bigint") + " = $5"
		orders = query{sql: `
SELECT ` + orderColumns(customers) + `, NOT (` + mine + `)
  FROM orders o
 WHERE o.channel = $1 AND o.paid_at >= $2::timestamptz - interval '1 day' AND o.paid_at < $3::timestamptz + interval '1 day'
   AND (` + mine + ` AND o.paid_at >= $2 AND o.paid_at < $3
        OR o.user_id IS NOT NULL AND ` + theirs + ` AND NOT ` + mine + `)`, shape: orderShape.withOther()}
	}
	return orders, refunds
}

// keysQueries: $1 keys, $2 channel, $3 day start, $4 day end. A record of
// the window is left out: the window queries returned it.
func keysQueries(customers bool) (orders, refunds query) {
	orders = query{sql: `
SELECT ` + orderColumns(customers) + `, i.status
  FROM orders o
  LEFT JOIN idempotency_records i ON i.scope = 'payment' AND i.idem_key = o.order_no
 WHERE o.order_no = ANY($1::text[])
   AND NOT coalesce(o.channel = $2 AND o.paid_at >= $3 AND o.paid_at < $4, false)`, shape: orderShape.withIdem()}
	refunds = query{sql: `
SELECT ` + refundColumns + `, i.status
  FROM refunds r
  LEFT JOIN idempotency_records i ON i.scope = 'refund' AND i.idem_key = r.refund_no
 WHERE r.refund_no = ANY($1::text[])
   AND NOT coalesce(r.channel = $2 AND r.refunded_at >= $3 AND r.refunded_at < $4, false)`, shape: refundShape.withIdem()}
	return orders, refunds
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

// idemStatusesSQL: $1 order keys, $2 refund keys. The keys are joined
// as a table, one index probe each: asked as "idem_key = ANY($1) OR …",
// tens of thousands of keys made the planner scan every idempotency
// record, or probe the index under a bitmap, for one to three seconds
// of a night of ten million rows, where the probes take a few hundred
// milliseconds.
const idemStatusesSQL = `
SELECT 'payment', i.idem_key, i.status
  FROM unnest($1::text[]) AS k(key) JOIN idempotency_records i ON i.scope = 'payment' AND i.idem_key = k.key
UNION ALL
SELECT 'refund', i.idem_key, i.status
  FROM unnest($2::text[]) AS k(key) JOIN idempotency_records i ON i.scope = 'refund' AND i.idem_key = k.key`

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
	rows, err := db.pool.Query(ctx, idemStatusesSQL, orderKeys, refundKeys)
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
	args := []any{channel, day.Start(), day.End()}
	if !shard.Whole() {
		args = append(args, shard.Count, shard.Index)
	}
	orders, refunds := windowQueries(customers, !shard.Whole())
	orders.args, refunds.args = args, args
	return db.streamLocal(ctx, channel, day, fn, orders, refunds)
}

// LoadKeys streams the records with the given keys that are not in the
// day's window of the channel: what a run adds to the window (LoadWindow)
// for the keys of its file the window did not hold.
func (db *DB) LoadKeys(ctx context.Context, channel string, day reconcile.BusinessDay,
	orderKeys, refundKeys []string, fn func(*reconcile.LocalRow) error) (int, error) {
	customers, err := db.HasCustomers(ctx)
	if err != nil {
		return 0, err
	}
	orders, refunds := keysQueries(customers)
	var qs []query
	if len(orderKeys) > 0 {
		orders.args = []any{orderKeys, channel, day.Start(), day.End()}
		qs = append(qs, orders)
	}
	if len(refundKeys) > 0 {
		refunds.args = []any{refundKeys, channel, day.Start(), day.End()}
		qs = append(qs, refunds)
	}
	return db.streamLocal(ctx, channel, day, fn, qs...)
}

// pgEpoch is where PostgreSQL's binary timestamps count from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// streamLocal runs the queries in turn, reads their rows in binary and
// hands them over without allocating per row: the text columns are the
// driver's bytes, the numbers and times are decoded from their wire form.
func (db *DB) streamLocal(ctx context.Context, channel string, day reconcile.BusinessDay,
	fn func(*reconcile.LocalRow) error, qs ...query) (int, error) {
	loc := day.Location
	if loc == nil {
		loc = time.UTC
	}
	n := 0
	for _, q := range qs {
		m, err := db.streamQuery(ctx, q, loc, fn)
		n += m
		if err != nil {
			return n, fmt.Errorf("load local records of %s %s: %w", channel, day, err)
		}
	}
	return n, nil
}

func (db *DB) streamQuery(ctx context.Context, q query, loc *time.Location, fn func(*reconcile.LocalRow) error) (int, error) {
	args := append([]any{pgx.QueryResultFormats{pgx.BinaryFormatCode}}, q.args...)
	rows, err := db.pool.Query(ctx, q.sql, args...)
	if err != nil {
		return 0, interpretError(err)
	}
	defer rows.Close()
	n, sh := 0, q.shape
	r := reconcile.LocalRow{Kind: sh.kind}
	for rows.Next() {
		v := rows.RawValues()
		if len(v) != sh.width || len(v[sh.amount]) != 8 {
			return n, errors.New("unexpected row shape")
		}
		r.OrderNo, r.Currency, r.Status, r.ChannelTxnID = v[0], v[sh.cur], v[sh.status], v[sh.id]
		r.Amount = int64(binary.BigEndian.Uint64(v[sh.amount]))
		r.SettledAt = pgTime(v[sh.at], loc)
		if sh.refund >= 0 {
			r.RefundNo = v[sh.refund]
		}
		if sh.idem >= 0 {
			r.IdemStatus = v[sh.idem]
		}
		if sh.other >= 0 {
			r.OtherShard = len(v[sh.other]) == 1 && v[sh.other][0] == 1
		}
		if sh.customer >= 0 {
			r.Customer, r.HasCustomer = 0, len(v[sh.customer]) == 8
			if r.HasCustomer {
				r.Customer = int64(binary.BigEndian.Uint64(v[sh.customer]))
			}
			r.CreatedAt = pgTime(v[sh.created], loc)
		}
		n++
		if err := fn(&r); err != nil {
			return n, err
		}
	}
	return n, interpretError(rows.Err())
}

// pgTime decodes a binary timestamptz; NULL is the zero time.
func pgTime(v []byte, loc *time.Location) time.Time {
	if len(v) != 8 {
		return time.Time{}
	}
	us := int64(binary.BigEndian.Uint64(v))
	return pgEpoch.Add(time.Duration(us) * time.Microsecond).In(loc)
}
