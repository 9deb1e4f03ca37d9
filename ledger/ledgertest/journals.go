package ledgertest

import (
	"context"
	"fmt"

	"reconcile"
	"reconcile/ledger"
)

// JournalCount is the number of journals posted, by any run.
func JournalCount(ctx context.Context, db *ledger.DB) (int, error) {
	var n int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM journals`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count journals: %w", err)
	}
	return n, nil
}

// Journals returns every journal with its lines, by idempotency key: what
// the database holds, read apart from the code that wrote it.
func Journals(ctx context.Context, db *ledger.DB) ([]reconcile.Journal, error) {
	rows, err := db.Pool().Query(ctx, `
SELECT j.id, j.idempotency_key, j.kind, j.channel, coalesce(j.order_no, ''),
       coalesce(j.refund_no, ''), j.channel_txn_id, coalesce(j.row_key, j.channel_txn_id),
       j.currency, j.amount, coalesce(j.memo, ''), l.account, l.amount, l.currency
  FROM journals j
  LEFT JOIN journal_lines l ON l.journal_id = j.id
 ORDER BY j.idempotency_key, l.line_no`)
	if err != nil {
		return nil, fmt.Errorf("list journals: %w", err)
	}
	defer rows.Close()
	var (
		out    []reconcile.Journal
		lastID int64 = -1
	)
	for rows.Next() {
		var (
			id                    int64
			j                     reconcile.Journal
			account, lineCurrency *string
			lineAmount            *int64
		)
		if err := rows.Scan(&id, &j.IdempotencyKey, &j.Kind, &j.Channel, &j.OrderNo, &j.RefundNo,
			&j.ChannelTxnID, &j.Row, &j.Currency, &j.Amount, &j.Memo,
			&account, &lineAmount, &lineCurrency); err != nil {
			return nil, fmt.Errorf("list journals: %w", err)
		}
		if id != lastID {
			out = append(out, j)
			lastID = id
		}
		if account != nil {
			last := &out[len(out)-1]
			last.Lines = append(last.Lines, reconcile.Posting{
				Account: *account, Amount: *lineAmount, Currency: *lineCurrency,
			})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list journals: %w", err)
	}
	return out, nil
}
