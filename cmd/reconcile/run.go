package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"reconcile"
	"reconcile/bankfeed"
	"reconcile/channelfeed"
	"reconcile/config"
	"reconcile/ledger"
	"reconcile/metrics"
	"reconcile/nightly"
)

const runSynopsis = `reconcile run --date YYYY-MM-DD [--channel NAME] [--file PATH] [--format FORMAT]
         [--tz ZONE] [--dsn DSN] [--out DIR] [--dry-run] [--force] [--config FILE]
         [--log-level LEVEL]

Reconciles one business date. Without --channel, every channel in the config,
each file found through the channel's path template. --file needs --channel.
--dry-run computes and reports everything (workbook, summary.json, the alert
printed, not sent) and writes nothing to the database.

A file whose run already succeeded is not reconciled again: the first run's
summary.json (marked "replay") and workbook are written to the out directory,
and no second alert is sent. --force re-evaluates it. A different file for
the same date makes a new run that supersedes the earlier one.

Logs go to stderr: JSON lines, or text when stderr is a terminal, where a
progress line also shows the run's stage and the rows read per second.`

type runFlags struct {
	*common
	date, channel, file, format, tz, out string
	cpuProfile, shard, metricsFile       string
	account                              string
	dryRun, force                        bool
}

func (a *App) runCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("run", runSynopsis)
	var f runFlags
	fs.StringVar(&f.date, "date", "", "business date `YYYY-MM-DD` (required)")
	fs.StringVar(&f.channel, "channel", "", "channel `NAME` (default: every configured channel)")
	fs.StringVar(&f.file, "file", "", "settlement file `PATH` (default: the channel's path template)")
	fs.StringVar(&f.format, "format", "", "settlement `FORMAT`: "+fmt.Sprint(channelfeed.Formats())+", or a bank statement's: "+
		fmt.Sprint(bankfeed.Formats())+" (default: the channel's)")
	fs.StringVar(&f.account, "account", "", "the bank `ACCOUNT` (IBAN or number) a statement must be of (default: the channel's)")
	fs.StringVar(&f.tz, "tz", "", "business time `ZONE`, IANA name (default: the channel's, else UTC)")
	fs.StringVar(&f.out, "out", "", "output `DIR` (default: out/<date>/<channel>)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "compute and report, write nothing to the database")
	fs.BoolVar(&f.force, "force", false, "re-evaluate a file whose run already succeeded, instead of returning that run's result")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to `FILE` (go tool pprof)")
	fs.StringVar(&f.shard, "shard", "", "reconcile only shard `I/N` of the keys (0 <= I < N); 'reconcile report' joins the shards")
	fs.StringVar(&f.metricsFile, "metrics-file", "", "after the runs, write their metrics to `PATH` (a *.prom file for node_exporter's textfile collector)")
	f.common = commonFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if f.date == "" {
		return usagef("run", "--date is required")
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cfg, err := loadConfig("run", f.config)
	if err != nil {
		return err
	}
	specs, err := f.specs(cfg)
	if err != nil {
		return err
	}
	dsn, err := a.dsn("run", f.dsn, cfg)
	if err != nil {
		return err
	}

	obs := a.runObserver(f.metricsFile, specs)
	n, err := a.notifier(cfg, f.dryRun)
	if err != nil {
		return err
	}
	job := a.newJob(cfg, counted(n, obs))
	job.Log, job.Progress = a.logAndProgress(f.level)
	job.Log.Debug("opening the database", "dsn", ledger.RedactDSN(dsn))
	db, err := ledger.Open(ctx, dsn)
	if err != nil {
		for _, s := range specs {
			job.Fail(ctx, s, err)
		}
		obs.NotStarted(specChannels(specs))
		return obs.WriteFile(f.metricsFile, err)
	}
	defer db.Close()
	job.DB = db
	return obs.WriteFile(f.metricsFile, a.runAll(ctx, job, specs, obs))
}

// runAll runs the specs one after another; a failed channel does not stop
// the others, but makes the whole command fail.
func (a *App) runAll(ctx context.Context, job *nightly.Job, specs []nightly.RunSpec, obs *metrics.Observer) error {
	var failed []error
	for _, s := range specs {
		start := time.Now()
		res, err := job.Run(ctx, s)
		obs.Ran(s.Channel, res, err, time.Since(start))
		if err != nil {
			failed = append(failed, fmt.Errorf("%s %s: %w", s.Channel, s.Day, err))
			continue
		}
		replay := ""
		if res.Replay {
			replay = fmt.Sprintf(" (the result of run %s, which reconciled this file before)", res.Run.ID)
		}
		fmt.Fprintf(a.Stdout, "%s %s: %d rows, %d findings need review, %d reversed automatically; reports in %s%s\n",
			s.Channel, s.Day, res.ChannelRows, res.NeedsReview(), res.AutoReversed(), s.OutDir, replay)
	}
	if len(failed) == 1 {
		return failed[0]
	}
	return errors.Join(failed...)
}

// specs turns the flags and the config into the runs to do.
func (f *runFlags) specs(cfg config.Config) ([]nightly.RunSpec, error) {
	var channels []config.Channel
	switch {
	case f.channel != "":
		if err := reconcile.CheckChannelName(f.channel); err != nil {
			return nil, usagef("run", "--channel: %s", err)
		}
		ch, _ := cfg.Lookup(f.channel)
		channels = []config.Channel{ch}
	case f.file != "":
		return nil, usagef("run", "--file needs --channel")
	case len(cfg.Channels) == 0:
		return nil, usagef("run", "--channel is required when the config names no channels")
	default:
		channels = cfg.Channels
	}
	shard, err := reconcile.ParseShard(f.shard)
	if err != nil {
		return nil, usagef("run", "--shard: %s", err)
	}
	var specs []nightly.RunSpec
	for _, ch := range channels {
		spec, err := f.spec(cfg, ch, len(channels) > 1)
		if err != nil {
			return nil, err
		}
		spec.Shard, spec.OutDir = shard, shardDir(spec.OutDir, shard)
		specs = append(specs, spec)
	}
	return specs, nil
}

// spec is the run of one channel: the config's, with what the flags say
// instead.
func (f *runFlags) spec(cfg config.Config, ch config.Channel, several bool) (nightly.RunSpec, error) {
	if f.format != "" {
		ch.Format = f.format
	}
	day, err := businessDay("run", ch, f.date, f.tz)
	if err != nil {
		return nightly.RunSpec{}, err
	}
	if f.account != "" {
		ch.Account = config.Accounts{f.account}
	}
	if ch.Format == "" {
		return nightly.RunSpec{}, usagef("run", "--format is required for channel %s: one of %v", ch.Name, channelfeed.Formats())
	}
	if ch.Statement() {
		if len(ch.Account) == 0 {
			return nightly.RunSpec{}, usagef("run", "--account is required for the bank statement of %s (no account configured)", ch.Name)
		}
		if f.shard != "" {
			return nightly.RunSpec{}, usagef("run", "--shard: a bank statement is read whole, not in shards")
		}
	} else if _, err := channelfeed.Lookup(ch.Format); err != nil {
		return nightly.RunSpec{}, usagef("run", "--format: %s (bank statements: %v)", err, bankfeed.Formats())
	}
	spec := nightly.NewSpec(cfg, ch, day)
	spec.DryRun, spec.Force = f.dryRun, f.force
	if f.file != "" {
		spec.File = f.file
	}
	if spec.File == "" {
		return nightly.RunSpec{}, usagef("run", "--file is required for channel %s (no path template configured)", ch.Name)
	}
	switch {
	case f.out != "" && several:
		spec.OutDir = filepath.Join(f.out, ch.Name)
	case f.out != "":
		spec.OutDir = f.out
	}
	return spec, nil
}
