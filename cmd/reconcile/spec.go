package main

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"reconcile"
	"reconcile/channelfeed"
	"reconcile/config"
)

// RunSpec is one reconciliation to do: a channel, a business date, a file.
type RunSpec struct {
	Channel string
	Format  string
	File    string
	Day     reconcile.BusinessDay
	OutDir  string
	DryRun  bool
	// Force re-evaluates a file whose run already succeeded, instead of
	// returning that run's result.
	Force bool
	// Grace is the cut-off window of the channel (see matcher.Options).
	Grace time.Duration
	// Shard, when not the whole, limits the run to the keys of one shard;
	// `reconcile report` puts the shards' results together.
	Shard reconcile.Shard
	// Feed carries the channel's parser settings (Stripe metadata keys, a
	// column mapping, the row window); its Location is the business day's.
	Feed channelfeed.Options

	expectRows int // the file's line count, to size the index once
	// log is the run's logger: channel and business date attached, and
	// the run id once Job.Run has made one.
	log *slog.Logger
}

// Parse returns the parser options of the run.
func (s RunSpec) Parse() channelfeed.Options {
	o := s.Feed
	o.Location = s.Day.Location
	return o
}

// newSpec is the run of channel ch for day as the config has it: the one
// place `run`, `schedule`, `report` and `demo` get a run's settings from.
// The file is the channel's path template filled in, the out directory
// <out_dir>/<date>/<channel>.
func newSpec(cfg config.Config, ch config.Channel, day reconcile.BusinessDay) RunSpec {
	return RunSpec{
		Channel: ch.Name,
		Format:  ch.Format,
		File:    ch.FilePath(day.Date),
		Day:     day,
		OutDir:  filepath.Join(cfg.OutDir, day.String(), ch.Name),
		Grace:   ch.CutOff(),
		Feed:    ch.Feed(day),
	}
}

// businessDay is the date YYYY-MM-DD in ch's business time zone, or in
// tz when it is given (--tz): a usage error of cmd when either is wrong.
func businessDay(cmd string, ch config.Channel, date, tz string) (reconcile.BusinessDay, error) {
	if tz != "" {
		ch.TimeZone = tz
	}
	loc, err := time.LoadLocation(ch.Zone())
	if err != nil {
		return reconcile.BusinessDay{}, usagef(cmd, "--tz %s: not an IANA time zone", reconcile.Quote(ch.Zone()))
	}
	day, err := reconcile.NewBusinessDay(date, loc)
	if err != nil {
		return reconcile.BusinessDay{}, usagef(cmd, "--date: %s", err)
	}
	return day, nil
}

// shardDir is the out directory of one shard's run, beside the others.
func shardDir(out string, shard reconcile.Shard) string {
	if shard.Whole() {
		return out
	}
	return filepath.Join(out, fmt.Sprintf("shard-%d-of-%d", shard.Index, shard.Count))
}
