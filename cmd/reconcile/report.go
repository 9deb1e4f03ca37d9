package main

import (
	"context"
	"fmt"

	"reconcile"
	"reconcile/nightly"
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
	c := commonFlags(fs)
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
	cfg, err := loadConfig("report", c.config)
	if err != nil {
		return err
	}
	ch, _ := cfg.Lookup(*channel)
	day, err := businessDay("report", ch, *date, *tz)
	if err != nil {
		return err
	}
	if *out == "" {
		*out = nightly.NewSpec(cfg, ch, day).OutDir
	}
	job, err := a.openJob(ctx, "report", c.dsn, cfg, a.newLogger(c.level).With("channel", *channel, "business_date", day.String()))
	if err != nil {
		return err
	}
	defer job.DB.Close()
	return a.report(ctx, job, day, *channel, *shards, *out)
}

// report makes the report of channel's day over its shard runs, writes it
// to out and sends its alert once.
func (a *App) report(ctx context.Context, job *nightly.Job, day reconcile.BusinessDay, channel string, shards int, out string) error {
	rep, err := job.MakeReport(ctx, channel, day, shards, out)
	if err != nil {
		return err
	}
	res := rep.Result
	fmt.Fprintf(a.Stdout, "%s %s: %d shard runs, %d rows, %d findings need review, %d reversed automatically; reports in %s\n",
		channel, day, len(rep.RunIDs), res.ChannelRows, res.NeedsReview(), res.AutoReversed(), out)
	return job.SendReport(ctx, rep)
}
