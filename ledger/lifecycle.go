package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"reconcile"
)

// settlePending records what this run found of earlier pending findings.
func settlePending(ctx context.Context, tx pgx.Tx, runID string, resolved, escalated []string) error {
	for _, s := range []struct {
		state reconcile.State
		refs  []string
	}{{reconcile.StateResolved, resolved}, {reconcile.StateEscalated, escalated}} {
		if len(s.refs) == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, `
UPDATE findings SET state = $1, settled_by = $2, version = version + 1
 WHERE ref = ANY($3::text[]) AND category = 'pending'`, s.state, runID, s.refs); err != nil {
			return err
		}
	}
	return nil
}

// supersede marks the earlier successful runs of the run's channel and date
// as replaced by it. Their findings still waiting for a person are
// superseded too: the new run's findings are the ones to work on. Decisions
// already taken, and journals already posted, stay as they are.
func supersede(ctx context.Context, tx pgx.Tx, run reconcile.Run) error {
	rows, err := tx.Query(ctx, `
UPDATE runs SET superseded_by = $1
 WHERE channel = $2 AND business_date = $3 AND status = 'SUCCEEDED'
   AND superseded_by IS NULL AND id <> $1
   AND (shard = $4 OR shard = '' OR $4 = '')
RETURNING id`, run.ID, run.Channel, dateOf(run.Day), run.Shard.String())
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return err
	}
	_, err = tx.Exec(ctx, `
UPDATE findings SET state = 'SUPERSEDED', version = version + 1
 WHERE run_id = ANY($1::text[]) AND state = 'OPEN'`, ids)
	return err
}

// remember keeps the run's memory: its parts, one table row each, written
// with COPY, and its filter. A night without rows keeps just the filter.
func remember(ctx context.Context, tx pgx.Tx, run reconcile.Run, mem reconcile.NightMemory) error {
	date := dateOf(run.Day)
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"settled_keys"},
		[]string{"run_id", "channel", "business_date", "part", "rows", "records"},
		pgx.CopyFromSlice(len(mem.Parts), func(i int) ([]any, error) {
			p := mem.Parts[i]
			return []any{run.ID, run.Channel, date, p.Index, p.Rows, p.Records}, nil
		}))
	if err != nil {
		return err
	}
	filter := mem.Filter
	if filter == nil {
		filter = []byte{}
	}
	_, err = tx.Exec(ctx, `INSERT INTO settled_filters (run_id, bits, filter) VALUES ($1, $2, $3)`, run.ID, mem.Bits, filter)
	return err
}

// StoredRun is a finished run as the database keeps it.
type StoredRun struct {
	Run          reconcile.Run
	Summary      []byte // summary.json as written
	WorkbookName string
	Workbook     []byte
	AlertSent    bool
}

// LatestSuccess returns the newest successful run of channel, day and
// shard that no later run superseded, or reconcile.ErrNotFound.
func (db *DB) LatestSuccess(ctx context.Context, channel string, day reconcile.BusinessDay, shard reconcile.Shard) (StoredRun, error) {
	var id string
	err := db.pool.QueryRow(ctx, `
SELECT id FROM runs
 WHERE channel = $1 AND business_date = $2 AND shard = $3 AND status = 'SUCCEEDED' AND superseded_by IS NULL
 ORDER BY finished_at DESC LIMIT 1`, channel, dateOf(day), shard.String()).Scan(&id)
	if err != nil {
		return StoredRun{}, fmt.Errorf("latest run of %s %s: %w", channel, day, interpretError(err))
	}
	return db.StoredRun(ctx, id)
}

// StoredRun returns a run with its reports, or reconcile.ErrNotFound.
func (db *DB) StoredRun(ctx context.Context, id string) (StoredRun, error) {
	run, err := db.GetRun(ctx, id)
	if err != nil {
		return StoredRun{}, err
	}
	s := StoredRun{Run: run}
	var summary *string
	var name *string
	var sent *time.Time
	if err := db.pool.QueryRow(ctx, `SELECT summary::text, workbook_name, workbook, alert_sent_at FROM runs WHERE id = $1`, id).
		Scan(&summary, &name, &s.Workbook, &sent); err != nil {
		return StoredRun{}, fmt.Errorf("get run %s: %w", id, interpretError(err))
	}
	if summary != nil {
		s.Summary = []byte(*summary)
	}
	if name != nil {
		s.WorkbookName = *name
	}
	s.AlertSent = sent != nil
	return s, nil
}

// ClaimAlert takes the right to send a run's alert for hold, and returns
// how far an earlier attempt got. It is false when the alert was sent
// already, or another process holds the claim: no run is ever alerted
// twice.
func (db *DB) ClaimAlert(ctx context.Context, runID string, hold time.Duration) (bool, reconcile.Delivery, error) {
	return claimAlert(ctx, db.pool, runAlerts, runID, hold)
}

// AlertProgress records how far a claimed alert got, as each step is done.
func (db *DB) AlertProgress(ctx context.Context, runID string, d reconcile.Delivery) error {
	return alertProgress(ctx, db.pool, runAlerts, runID, d)
}

// alertTable is a table that remembers alerts; their alert columns are
// alike.
type alertTable string

const (
	runAlerts    alertTable = "runs"          // a run's alert
	reportAlerts alertTable = "shard_reports" // a report's over shard runs
)

func claimAlert(ctx context.Context, q *pgxpool.Pool, table alertTable, id string, hold time.Duration) (bool, reconcile.Delivery, error) {
	var d reconcile.Delivery
	attempts := ""
	if table == runAlerts {
		attempts = ", alert_attempts = alert_attempts + 1"
	}
	var raw string
	err := q.QueryRow(ctx, `
UPDATE `+string(table)+` SET alert_claimed_until = now() + $2::interval`+attempts+`
 WHERE id = $1 AND alert_sent_at IS NULL
   AND (alert_claimed_until IS NULL OR alert_claimed_until < now())
RETURNING coalesce(alert_delivery::text, '{}')`, id, hold.String()).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, d, nil
	}
	if err != nil {
		return false, d, fmt.Errorf("claim alert %s: %w", id, interpretError(err))
	}
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return false, d, fmt.Errorf("claim alert %s: its delivery record: %w", id, err)
	}
	return true, d, nil
}

func alertProgress(ctx context.Context, q *pgxpool.Pool, table alertTable, id string, d reconcile.Delivery) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("record alert %s: %w", id, err)
	}
	if _, err := q.Exec(ctx, `UPDATE `+string(table)+` SET alert_delivery = $2::jsonb WHERE id = $1`, id, string(b)); err != nil {
		return fmt.Errorf("record alert %s: %w", id, interpretError(err))
	}
	return nil
}

// AlertDone records how sending a claimed alert went: sent, or the error
// that a later tick or `reconcile alert --resend` retries after.
func (db *DB) AlertDone(ctx context.Context, runID string, sendErr error) error {
	var err error
	if sendErr == nil {
		_, err = db.pool.Exec(ctx, `
UPDATE runs SET alert_sent_at = now(), alert_error = NULL, alert_claimed_until = NULL WHERE id = $1`, runID)
	} else {
		_, err = db.pool.Exec(ctx, `
UPDATE runs SET alert_error = $2, alert_claimed_until = NULL WHERE id = $1`, runID, sendErr.Error())
	}
	if err != nil {
		return fmt.Errorf("record alert of run %s: %w", runID, interpretError(err))
	}
	return nil
}

// AlertsDue lists the finished runs started since then whose alert has not
// been sent, oldest first.
func (db *DB) AlertsDue(ctx context.Context, since time.Time) ([]string, error) {
	rows, err := db.pool.Query(ctx, `
SELECT id FROM runs
 WHERE alert_sent_at IS NULL AND status <> 'RUNNING' AND started_at >= $1
 ORDER BY started_at`, since)
	if err != nil {
		return nil, fmt.Errorf("alerts due: %w", interpretError(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("alerts due: %w", interpretError(err))
	}
	return ids, nil
}

// ClaimOverdue records that the missing file of channel and day has been
// alerted. It is true only for the first caller: one alert per channel
// and date, however many ticks and replicas notice.
func (db *DB) ClaimOverdue(ctx context.Context, channel string, day reconcile.BusinessDay) (bool, error) {
	tag, err := db.pool.Exec(ctx, `
INSERT INTO overdue_alerts (channel, business_date) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		channel, dateOf(day))
	if err != nil {
		return false, fmt.Errorf("claim overdue alert of %s %s: %w", channel, day, interpretError(err))
	}
	return tag.RowsAffected() == 1, nil
}

// HasSuccess reports whether a run of channel and day succeeded on a file
// with this SHA-256 and was not superseded.
func (db *DB) HasSuccess(ctx context.Context, channel string, day reconcile.BusinessDay, sha string) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `
SELECT EXISTS (SELECT 1 FROM runs
 WHERE channel = $1 AND business_date = $2 AND file_sha256 = $3 AND shard = ''
   AND status = 'SUCCEEDED' AND superseded_by IS NULL)`, channel, dateOf(day), sha).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("runs of %s %s: %w", channel, day, interpretError(err))
	}
	return ok, nil
}

// countsOf reads a run's counts column.
func countsOf(raw []byte) (map[reconcile.Category]int, error) {
	out := map[reconcile.Category]int{}
	if len(raw) == 0 {
		return out, nil
	}
	var m map[string]int
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for k, v := range m {
		out[reconcile.Category(k)] = v
	}
	return out, nil
}
