package nightly

import (
	"context"
	"fmt"
	"path/filepath"

	"reconcile"
	"reconcile/ledger"
	"reconcile/reports"
)

// Report is the report over a date's shard runs: one workbook, one
// summary.json and one alert for all of them.
type Report struct {
	Result *reconcile.Result // its run id, report-…, names the set of runs
	RunIDs []string          // the shard runs, in order
	path   string            // where its workbook was written
}

// MakeReport puts the current shard runs of channel's day together
// (split shards ways, when above 0) and writes the report's workbook and
// summary.json to out.
func (j *Job) MakeReport(ctx context.Context, channel string, day reconcile.BusinessDay, shards int, out string) (*Report, error) {
	res, runIDs, err := combineShards(ctx, j.DB, channel, day, shards)
	if err != nil {
		return nil, err
	}
	j.log().Debug("shard runs combined", "run_id", res.Run.ID, "shard_runs", runIDs)
	if err := stillOpen(ctx, j.DB, j.Config, j.Now(), res); err != nil {
		return nil, err
	}
	trend, err := j.DB.Trend(ctx, channel, day, reports.TrendDays-1)
	if err != nil {
		return nil, err
	}
	name := reports.WorkbookName(channel, day)
	rep, err := reports.Render(res, name, reports.WorkbookOptions{MaxLines: j.Config.ReviewMaxLines, Trend: trend})
	if err != nil {
		return nil, err
	}
	defer rep.Close()
	if err := rep.Write(out); err != nil {
		return nil, err
	}
	return &Report{Result: res, RunIDs: runIDs, path: filepath.Join(out, name)}, nil
}

// SendReport sends the report's alert, once for its set of shard runs
// however often the report is made.
func (j *Job) SendReport(ctx context.Context, r *Report) error {
	res := r.Result
	// The report's id names its set of shard runs, as a run id names a run.
	id := res.Run.ID
	sent, err := sendOnce(ctx, j.Notifier, reportAlert(j.DB, id, res.Run.Channel, res.Run.Day, r.RunIDs),
		reports.RunMessage(res, j.Config.Slack.Top), r.path)
	if err != nil {
		return fmt.Errorf("report %s: the alert was not sent (make the report again to retry): %w", id, err)
	}
	if sent {
		j.log().Info("report alert sent", "run_id", id)
	}
	return nil
}

// combineShards puts the current runs of a date together as one result
// (reconcile.CombineShards), and returns the ids of those runs.
func combineShards(ctx context.Context, db *ledger.DB, channel string, day reconcile.BusinessDay, want int) (*reconcile.Result, []string, error) {
	runs, err := db.CurrentRuns(ctx, channel, day)
	if err != nil {
		return nil, nil, err
	}
	if err := reconcile.ShardSet(channel, day, runs, want); err != nil {
		return nil, nil, err
	}
	parts := make([]*reconcile.Result, len(runs))
	for i, r := range runs {
		if parts[i], err = db.LoadResult(ctx, r.ID); err != nil {
			return nil, nil, err
		}
	}
	res, ids := reconcile.CombineShards(day, parts)
	return res, ids, nil
}
