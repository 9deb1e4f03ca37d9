package ledger

import (
	"context"
	"fmt"
	"time"

	"reconcile"
)

// ClaimFetchAlert records that the fetch of channel's file of day has
// been alerted as kind ("refused", "bad_file", "no_bill"). It is true
// only for the first caller.
func (db *DB) ClaimFetchAlert(ctx context.Context, channel string, day reconcile.BusinessDay, kind string) (bool, error) {
	tag, err := db.pool.Exec(ctx, `
INSERT INTO fetch_alerts (channel, business_date, kind) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		channel, dateOf(day), kind)
	if err != nil {
		return false, fmt.Errorf("claim fetch alert of %s %s: %w", channel, day, interpretError(err))
	}
	return tag.RowsAffected() == 1, nil
}

// Batch is a settlement batch fetched, and the date it was filed under.
type Batch struct {
	Number int64
	Date   time.Time // the business date, midnight UTC as PostgreSQL's date
	SHA256 string
	// Held is a batch kept aside, not filed: its date's file holds
	// another batch, or a file no batch was filed as.
	Held bool
}

// LastBatch is the highest batch of channel's account fetched so far, 0
// when none has been.
func (db *DB) LastBatch(ctx context.Context, channel, account string) (int64, error) {
	var n int64
	err := db.pool.QueryRow(ctx, `
SELECT coalesce(max(batch), 0) FROM fetched_batches WHERE channel = $1 AND account = $2`,
		channel, account).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("last batch of %s %s: %w", channel, account, interpretError(err))
	}
	return n, nil
}

// RecordBatch remembers that batch was fetched and filed under day. A
// batch fetched again (--force) keeps its number and takes its new hash;
// one held before is filed now. A second batch filed under one date is
// refused by the database too (ErrConflict): two replicas cannot both
// file one.
func (db *DB) RecordBatch(ctx context.Context, channel, account string, b int64, day reconcile.BusinessDay, sha string) error {
	_, err := db.pool.Exec(ctx, `
INSERT INTO fetched_batches (channel, account, batch, business_date, file_sha256, held) VALUES ($1, $2, $3, $4, $5, false)
ON CONFLICT (channel, account, batch) DO UPDATE
   SET business_date = excluded.business_date, file_sha256 = excluded.file_sha256, held = false, fetched_at = now()`,
		channel, account, b, dateOf(day), sha)
	if err != nil {
		return fmt.Errorf("record batch %d of %s %s: %w", b, channel, account, interpretError(err))
	}
	return nil
}

// HoldBatch remembers that batch was fetched and kept aside, not filed,
// under the date its rows gave it: its date's file holds another batch
// or a file no batch was filed as, or its rows are dated outside the
// channel's row window. It is true only for the caller that recorded the
// batch as held first, which alerts it: a batch held again (--force), or
// held by another replica at the same moment, is not alerted twice.
func (db *DB) HoldBatch(ctx context.Context, channel, account string, b int64, day reconcile.BusinessDay, sha string) (bool, error) {
	date := dateOf(day)
	wrap := func(err error) error {
		return fmt.Errorf("hold batch %d of %s %s: %w", b, channel, account, interpretError(err))
	}
	tag, err := db.pool.Exec(ctx, `
INSERT INTO fetched_batches (channel, account, batch, business_date, file_sha256, held) VALUES ($1, $2, $3, $4, $5, true)
ON CONFLICT (channel, account, batch) DO NOTHING`, channel, account, b, date, sha)
	if err != nil {
		return false, wrap(err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	// Filed before (fetched again with --force): held now, and alerted.
	// Of two callers, the row lock lets one see it not held.
	tag, err = db.pool.Exec(ctx, `
UPDATE fetched_batches SET business_date = $4, file_sha256 = $5, held = true, fetched_at = now()
 WHERE channel = $1 AND account = $2 AND batch = $3 AND NOT held`, channel, account, b, date, sha)
	if err != nil {
		return false, wrap(err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	_, err = db.pool.Exec(ctx, `
UPDATE fetched_batches SET business_date = $4, file_sha256 = $5, fetched_at = now()
 WHERE channel = $1 AND account = $2 AND batch = $3`, channel, account, b, date, sha)
	if err != nil {
		return false, wrap(err)
	}
	return false, nil
}

// BatchesOn lists the batches of channel's account filed under day.
func (db *DB) BatchesOn(ctx context.Context, channel, account string, day reconcile.BusinessDay) ([]Batch, error) {
	rows, err := db.pool.Query(ctx, `
SELECT batch, business_date, file_sha256, held FROM fetched_batches
 WHERE channel = $1 AND account = $2 AND business_date = $3 ORDER BY batch`,
		channel, account, dateOf(day))
	if err != nil {
		return nil, fmt.Errorf("batches of %s %s %s: %w", channel, account, day, interpretError(err))
	}
	defer rows.Close()
	var out []Batch
	for rows.Next() {
		var b Batch
		if err := rows.Scan(&b.Number, &b.Date, &b.SHA256, &b.Held); err != nil {
			return nil, fmt.Errorf("batches of %s %s %s: %w", channel, account, day, interpretError(err))
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("batches of %s %s %s: %w", channel, account, day, interpretError(err))
	}
	return out, nil
}
