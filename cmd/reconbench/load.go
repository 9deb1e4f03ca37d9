package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// LoadLocal copies the generated orders, refunds and idempotency records,
// their channel column set to channel, into the tables conn's search path
// finds, then analyzes them so the job's queries are planned on real
// statistics, as they would be on a database that has been in use.
func LoadLocal(ctx context.Context, conn *pgx.Conn, s Spec, channel string) (orders, refunds, idem int64, err error) {
	if orders, refunds, idem, err = copyLocal(ctx, conn, s.blocks(), s.block, channel); err != nil {
		return
	}
	_, err = conn.Exec(ctx, "ANALYZE orders, refunds, idempotency_records")
	return
}

// LoadEarlier copies the local records of the given number of nights
// before tonight, oldest first, their channel column set to channel. It
// does not analyze: the job's runs on those nights come first, and
// analyzeSchema after them.
func LoadEarlier(ctx context.Context, conn *pgx.Conn, s Spec, channel string, nights int) (orders, refunds, idem int64, err error) {
	per := s.blocks()
	night := func(b int) block { return s.nightBlock(nights-b/per, b%per) }
	return copyLocal(ctx, conn, nights*per, night, channel)
}

// copyLocal copies the orders, refunds and idempotency records of blocks
// 0 to n-1 that gen makes.
func copyLocal(ctx context.Context, conn *pgx.Conn, n int, gen func(int) block, channel string) (orders, refunds, idem int64, err error) {
	nullText := func(v string) any {
		if v == "" {
			return nil
		}
		return v
	}
	nullTime := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t
	}
	orders, err = copyBlocks(ctx, conn, n, gen, "orders",
		[]string{"order_no", "user_id", "amount_minor", "currency", "status", "channel", "channel_txn_id", "version", "created_at", "paid_at"},
		func(blk *block, emit func([]any)) {
			for _, o := range blk.orders {
				version := int32(1)
				if o.status != "PENDING" {
					version = 2
				}
				emit([]any{o.no, o.userID, o.amount, currency, o.status, channel, nullText(o.txnID), version, o.createdAt, nullTime(o.paidAt)})
			}
		})
	if err != nil {
		return
	}
	refunds, err = copyBlocks(ctx, conn, n, gen, "refunds",
		[]string{"refund_no", "order_no", "amount_minor", "currency", "status", "channel", "channel_refund_id", "created_at", "refunded_at"},
		func(blk *block, emit func([]any)) {
			for _, r := range blk.refunds {
				emit([]any{r.no, r.orderNo, r.amount, currency, r.status, channel, nullText(r.refundID), r.createdAt, nullTime(r.refundedAt)})
			}
		})
	if err != nil {
		return
	}
	idem, err = copyBlocks(ctx, conn, n, gen, "idempotency_records",
		[]string{"scope", "idem_key", "request_hash", "status", "response", "created_at"},
		func(blk *block, emit func([]any)) {
			for _, r := range blk.idem {
				var response any
				if r.status == "DONE" {
					response = `{"code":"SUCCESS"}`
				}
				emit([]any{r.scope, r.key, r.hash, r.status, response, r.createdAt})
			}
		})
	if err != nil {
		return
	}
	return
}

// copyBlocks streams one table's rows through a single COPY, making the
// blocks one at a time.
func copyBlocks(ctx context.Context, conn *pgx.Conn, n int, gen func(int) block, table string, cols []string, rows func(*block, func([]any))) (int64, error) {
	b := 0
	var pending [][]any
	emit := func(r []any) { pending = append(pending, r) }
	copied, err := conn.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromFunc(func() ([]any, error) {
		for len(pending) == 0 {
			if b >= n {
				return nil, nil
			}
			blk := gen(b)
			b++
			rows(&blk, emit)
		}
		r := pending[0]
		pending = pending[1:]
		return r, nil
	}))
	if err != nil {
		return copied, fmt.Errorf("copy %s: %w", table, err)
	}
	return copied, nil
}

// withSearchPath returns dsn with its search_path set, in either DSN form.
// pgx passes an unknown setting on to the server as a run-time parameter.
func withSearchPath(dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "search_path=" + schema
	}
	return dsn + " search_path=" + schema
}
