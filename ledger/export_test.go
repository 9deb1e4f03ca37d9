package ledger

import (
	"context"

	"reconcile"
)

// The local-records queries, exposed to the plan test.
var (
	WindowOrders, WindowRefunds = windowQueries(true, false)
	KeysOrders, KeysRefunds     = keysQueries(true)
)

// SQL is a query's statement.
func (q query) SQL() string { return q.sql }

// InterpretError is interpretError, for its test.
var InterpretError = interpretError

// ShardSQL is shardSQL, for the test that it agrees with reconcile.ShardOf.
var ShardSQL = shardSQL

// LoadLocal streams the local records relevant to reconciling channel on
// day: the channel's orders paid and refunds refunded on day, and every
// order and refund whose key is in orderKeys or refundKeys, whatever its
// date or channel. Each record appears once and carries the status of its
// idempotency record. fn is called for each row as it arrives; LoadLocal
// returns how many there were.
//
// A run reads the same with LoadWindow, LoadKeys and IdemStatuses, between
// which the matcher decides what to ask for; this puts them together, so
// that a test can see every record at once.
func (db *DB) LoadLocal(ctx context.Context, channel string, day reconcile.BusinessDay,
	orderKeys, refundKeys []string, fn func(reconcile.LocalRecord) error) (int, error) {
	var window []reconcile.LocalRecord
	n, err := db.LoadWindow(ctx, channel, day, reconcile.Shard{}, func(r *reconcile.LocalRow) error {
		window = append(window, r.Record())
		return nil
	})
	if err != nil {
		return n, err
	}
	var orders, refunds []string
	for _, r := range window {
		if r.Kind == reconcile.KindRefund {
			refunds = append(refunds, r.RefundNo)
		} else {
			orders = append(orders, r.OrderNo)
		}
	}
	idem := map[string]string{}
	if err := db.IdemStatuses(ctx, orders, refunds, func(k reconcile.Kind, key, status string) error {
		idem[string(k)+"/"+key] = status
		return nil
	}); err != nil {
		return n, err
	}
	for _, r := range window {
		r.IdemStatus = idem[string(r.Kind)+"/"+r.Key()]
		if err := fn(r); err != nil {
			return n, err
		}
	}
	m, err := db.LoadKeys(ctx, channel, day, orderKeys, refundKeys, func(r *reconcile.LocalRow) error { return fn(r.Record()) })
	return n + m, err
}
