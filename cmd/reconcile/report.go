package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"reconcile"
	"reconcile/ledger"
	"reconcile/reports"
)

const reportSynopsis = `reconcile report --date YYYY-MM-DD --channel NAME [--shards N] [--tz ZONE]
         [--out DIR] [--dsn DSN] [--config FILE] [--log-level LEVEL]

Puts together the runs of a date that was split across machines
('reconcile run --shard I/N'): one workbook, one summary.json and one alert
for all shards, written to DIR (default out/<date>/<channel>). Every shard
must have run; with --shards N the command checks there are exactly N. The
alert of the same set of shard runs is sent once, however often the report
is made.`

func (a *App) reportCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("report", reportSynopsis)
	date := fs.String("date", "", "business date `YYYY-MM-DD` (required)")
	channel := fs.String("channel", "", "channel `NAME` (required)")
	shards := fs.Int("shards", 0, "expect exactly `N` shards (default: as many as ran)")
	tz := fs.String("tz", "", "business time `ZONE` (default: the channel's)")
	out := fs.String("out", "", "output `DIR` (default: out/<date>/<channel>)")
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` (default: $RECONCILE_DATABASE_URL)")
	config := fs.String("config", "", "config `FILE` (JSON)")
	level := logLevelFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *date == "" || *channel == "" {
		return usagef("report", "--date and --channel are required")
	}
	if err := reconcile.CheckChannelName(*channel); err != nil {
		return usagef("report", "--channel: %s", err)
	}
	if given(fs, "shards") && (*shards < 1 || *shards > reconcile.MaxShards) {
		return usagef("report", "--shards %d: want the number of shards the date was split into, 1 to %d", *shards, reconcile.MaxShards)
	}
	cfg, err := LoadConfig(*config)
	if err != nil {
		return usagef("report", "%s", err)
	}
	ch, ok := cfg.Channel(*channel)
	if !ok {
		ch = ChannelConfig{Name: *channel}
	}
	zone := ch.TimeZone
	if zone == "" {
		zone = defaultZone(ch.Format)
	}
	if *tz != "" {
		zone = *tz
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return usagef("report", "--tz %s: not an IANA time zone", reconcile.Quote(zone))
	}
	day, err := reconcile.NewBusinessDay(*date, loc)
	if err != nil {
		return usagef("report", "--date: %s", err)
	}
	if *out == "" {
		*out = filepath.Join(cfg.OutDir, day.String(), *channel)
	}
	if *dsn == "" {
		*dsn = a.Getenv(cfg.DatabaseURLEnv)
	}
	if *dsn == "" {
		return usagef("report", "no database: pass --dsn or set %s", cfg.DatabaseURLEnv)
	}
	db, err := ledger.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	log := a.newLogger(level).With("channel", *channel, "business_date", day.String())
	job := a.newJob(cfg, a.notifier(cfg, false))
	job.DB, job.Log = db, log

	res, id, runIDs, err := combineShards(ctx, db, *channel, day, *shards)
	if err != nil {
		return err
	}
	// The report's id names its set of shard runs, as a run id names a run.
	log = log.With("run_id", id)
	log.Debug("shard runs combined", "shard_runs", runIDs)
	if err := job.stillOpen(ctx, res); err != nil {
		return err
	}
	trend, err := db.Trend(ctx, *channel, day, reports.TrendDays-1)
	if err != nil {
		return err
	}
	name := reports.WorkbookName(*channel, day)
	rep, err := renderReports(res, name, reports.WorkbookOptions{MaxLines: job.ReviewMaxLines, Trend: trend})
	if err != nil {
		return err
	}
	defer rep.close()
	if err := rep.write(*out); err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "%s %s: %d shard runs, %d rows, %d findings need review, %d reversed automatically; reports in %s\n",
		*channel, day, len(runIDs), res.ChannelRows, res.NeedsReview(), res.AutoReversed(), *out)

	sent, err := job.sendOnce(ctx, alertRecord{
		claim: func(ctx context.Context) (bool, reconcile.Delivery, error) {
			return db.ClaimReport(ctx, id, *channel, day, runIDs, alertHold)
		},
		progress: func(ctx context.Context, d reconcile.Delivery) error { return db.ReportAlertProgress(ctx, id, d) },
		done:     func(ctx context.Context, sendErr error) error { return db.ReportAlertDone(ctx, id, sendErr) },
	}, reports.RunMessage(res, job.Top), filepath.Join(*out, name))
	if err != nil {
		return fmt.Errorf("report %s: the alert was not sent (make the report again to retry): %w", id, err)
	}
	if sent {
		log.Info("report alert sent")
	}
	return nil
}

// combineShards puts the current runs of a date together as one result,
// and returns the ids of those runs. The result's run id names that set,
// so the same set is one report.
func combineShards(ctx context.Context, db *ledger.DB, channel string, day reconcile.BusinessDay, want int) (*reconcile.Result, string, []string, error) {
	runs, err := db.CurrentRuns(ctx, channel, day)
	if err != nil {
		return nil, "", nil, err
	}
	if len(runs) == 0 {
		return nil, "", nil, fmt.Errorf("%s %s: no successful run to report on", channel, day)
	}
	n := runs[0].Shard.Count
	if runs[0].Shard.Whole() {
		n = 1
	}
	if want > 0 && want != n {
		return nil, "", nil, fmt.Errorf("%s %s: the runs are split %d ways, not %d", channel, day, n, want)
	}
	seen := make([]bool, n)
	for _, r := range runs {
		c := r.Shard.Count
		if r.Shard.Whole() {
			c = 1
		}
		if r.FileSHA256 != runs[0].FileSHA256 {
			return nil, "", nil, fmt.Errorf("%s %s: the shards read different files (%s, %s): run every shard on one file",
				channel, day, runs[0].File, r.File)
		}
		if c != n || seen[r.Shard.Index] {
			return nil, "", nil, fmt.Errorf("%s %s: the current runs mix shard splits (%s and %s): run every shard of one split again",
				channel, day, runs[0].Shard, r.Shard)
		}
		seen[r.Shard.Index] = true
	}
	for i, ok := range seen {
		if !ok {
			return nil, "", nil, fmt.Errorf("%s %s: shard %d/%d has not run yet", channel, day, i, n)
		}
	}

	res := &reconcile.Result{Counts: map[reconcile.Category]int{}}
	for _, c := range reconcile.Categories {
		res.Counts[c] = 0
	}
	var ids []string
	for _, r := range runs {
		part, err := db.LoadResult(ctx, r.ID)
		if err != nil {
			return nil, "", nil, err
		}
		ids = append(ids, r.ID)
		res.ChannelRows += part.ChannelRows
		res.BatchRows += part.BatchRows
		res.LocalRows += part.LocalRows
		for c, v := range part.Counts {
			res.Counts[c] += v
		}
		res.Findings = append(res.Findings, part.Findings...)
		res.Journals = append(res.Journals, part.Journals...)
		if res.Run.StartedAt.IsZero() || r.StartedAt.Before(res.Run.StartedAt) {
			res.Run.StartedAt = r.StartedAt
		}
		if r.FinishedAt.After(res.Run.FinishedAt) {
			res.Run.FinishedAt = r.FinishedAt
		}
	}
	slices.Sort(ids)
	sum := sha256.Sum256([]byte(strings.Join(ids, ",")))
	id := "report-" + hex.EncodeToString(sum[:12])
	reconcile.SortFindings(res.Findings)
	res.Run.ID = id
	res.Run.Channel = channel
	res.Run.Day = day
	res.Run.Format = runs[0].Format
	res.Run.Status = reconcile.RunSucceeded
	// Every shard read the same file.
	res.Run.File, res.Run.FileSHA256 = runs[0].File, runs[0].FileSHA256
	return res, id, ids, nil
}
