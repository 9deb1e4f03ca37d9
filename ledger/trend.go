package ledger

import (
	"context"
	"fmt"
	"time"

	"reconcile"
)

// trendSQL counts, per category, what the current successful runs of a
// channel found on each of the $3 latest business dates before $2 that
// have one: a row per date and category, the shard runs of a date added
// up. It reads the counts each run stored when it committed rather than
// counting the findings table: they include the matched keys, which are
// never findings, and cost one row per run however many findings the run
// had. A run without stored counts still shows its date, with a NULL key.
const trendSQL = `
WITH days AS (
  SELECT DISTINCT business_date FROM runs
   WHERE channel = $1 AND business_date < $2 AND status = 'SUCCEEDED' AND superseded_by IS NULL
   ORDER BY business_date DESC
   LIMIT $3
)
SELECT r.business_date, e.key, coalesce(sum(e.value::int), 0)
  FROM runs r
  JOIN days d ON d.business_date = r.business_date
  LEFT JOIN LATERAL jsonb_each_text(
         CASE WHEN jsonb_typeof(r.counts) = 'object' THEN r.counts ELSE '{}'::jsonb END) e ON true
 WHERE r.channel = $1 AND r.status = 'SUCCEEDED' AND r.superseded_by IS NULL
 GROUP BY r.business_date, e.key
 ORDER BY r.business_date, e.key`

// Trend returns what the current successful runs of channel found on each
// of the n latest business dates before the given day that have one,
// oldest first: the day's own run is the caller's, since its reports are
// made before it commits. Superseded and failed runs do not count; the
// shard runs of a date are added up. The days are in before's time zone.
// With no such date the slice is empty, not nil.
func (db *DB) Trend(ctx context.Context, channel string, before reconcile.BusinessDay, n int) ([]reconcile.TrendDay, error) {
	out := []reconcile.TrendDay{}
	if n <= 0 {
		return out, nil
	}
	loc := before.Location
	if loc == nil {
		loc = time.UTC
	}
	rows, err := db.pool.Query(ctx, trendSQL, channel, dateOf(before), n)
	if err != nil {
		return nil, fmt.Errorf("trend of %s: %w", channel, interpretError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var (
			date  time.Time
			key   *string
			count int64
		)
		if err := rows.Scan(&date, &key, &count); err != nil {
			return nil, fmt.Errorf("trend of %s: %w", channel, interpretError(err))
		}
		y, m, d := date.Date()
		day := time.Date(y, m, d, 0, 0, 0, 0, loc)
		if len(out) == 0 || !out[len(out)-1].Day.Date.Equal(day) {
			out = append(out, reconcile.TrendDay{
				Day:    reconcile.BusinessDay{Date: day, Location: loc},
				Counts: map[reconcile.Category]int{},
			})
		}
		if key != nil {
			out[len(out)-1].Counts[reconcile.Category(*key)] += int(count)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("trend of %s: %w", channel, interpretError(err))
	}
	return out, nil
}
