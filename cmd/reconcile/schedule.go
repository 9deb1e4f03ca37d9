package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"reconcile"
	"reconcile/config"
	"reconcile/ledger"
	"reconcile/nightly"
)

const scheduleSynopsis = `reconcile schedule [--config FILE] [--dsn DSN] [--log-level LEVEL]
                   [--metrics-listen ADDR]

Runs until SIGINT or SIGTERM. At each tick of the config's schedule (default
"0 3 * * *" in the schedule's time zone) it first fetches, for every channel
with a fetch block, the files of the lookback window that the channel can
have made by now (its available_after); then it reconciles, for every
configured channel and in date order, each business date of the lookback
window (default 7 days) whose file is there and has no successful run yet. A
file not there yet is waited for; past the channel's deadline it is alerted,
once. A channel that refuses a fetch (credentials, permission) is alerted
once; one that has no bill for a date, once.
Alerts that could not be sent are sent again. Several replicas can run side
by side: runs of one channel and date take turns, and a file already
reconciled is not redone. A run in progress when the signal arrives is rolled
back and recorded as failed; nothing is left half-written.

With --metrics-listen (or the config's metrics.listen) it serves Prometheus
metrics on /metrics and a health check on /healthz.`

func (a *App) scheduleCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("schedule", scheduleSynopsis)
	cfgFile := fs.String("config", "", "config `FILE` (JSON, required)")
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` (default: $RECONCILE_DATABASE_URL)")
	level := logLevelFlag(fs)
	metricsListen := fs.String("metrics-listen", "", "serve /metrics and /healthz on `ADDR`, such as 127.0.0.1:9464 (default: the config's metrics.listen, else none)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cfgFile == "" {
		return usagef("schedule", "--config is required: it names the channels")
	}
	cfg, err := loadConfig("schedule", *cfgFile)
	if err != nil {
		return err
	}
	if *metricsListen != "" {
		if err := config.CheckListen(*metricsListen); err != nil {
			return usagef("schedule", "--metrics-listen: %s", err)
		}
		cfg.Metrics.Listen = *metricsListen
	}
	if len(cfg.Channels) == 0 {
		return usagef("schedule", "config %s names no channels", *cfgFile)
	}
	db, err := a.openDB(ctx, "schedule", *dsn, cfg)
	if err != nil {
		return err
	}
	defer db.Close()

	// Ticks log from cron's goroutines while this one logs too; slog's
	// handlers write each line whole.
	logger := a.newLogger(level)
	s, err := a.newScheduler(cfg, db, logger)
	if err != nil {
		return err
	}
	loc, _ := time.LoadLocation(cfg.Schedule.TimeZone) // validated by config.Load
	cl := cronLogger{logger}
	c := cron.New(
		cron.WithLocation(loc),
		cron.WithLogger(cl),
		cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)),
	)
	if _, err := c.AddFunc(cfg.Schedule.Spec, func() { s.Tick(ctx) }); err != nil {
		return usagef("schedule", "schedule.spec %s: %s", reconcile.Quote(cfg.Schedule.Spec), err)
	}
	stopMetrics, err := s.Metrics.Serve(cfg.Metrics.Listen, cfg.Metrics.Stale(), db.Ping, func() { c.Entries() }, logger)
	if err != nil {
		return err
	}
	defer stopMetrics()
	c.Start()
	next := c.Entries()[0].Next
	logger.Info("schedule started", "channels", len(cfg.Channels), "spec", cfg.Schedule.Spec,
		"time_zone", loc.String(), "next_tick", next)
	<-ctx.Done()
	// ctx is cancelled, so a run in progress rolls back; wait for it.
	<-c.Stop().Done()
	logger.Info("schedule stopped")
	return nil
}

// newScheduler is the scheduler of cfg: its job, its metrics, and the
// clients of the channels it fetches from.
func (a *App) newScheduler(cfg config.Config, db *ledger.DB, logger *slog.Logger) (*nightly.Scheduler, error) {
	job, err := a.alertingJob(cfg, db, logger)
	if err != nil {
		return nil, err
	}
	s := &nightly.Scheduler{Config: cfg, Job: job, Now: a.Now, Log: logger}
	s.Metrics = a.scheduleObserver(cfg, job)
	f, err := a.fetcher(cfg.Channels, db)
	if err != nil {
		return nil, err
	}
	f.Log, f.Metrics = logger, s.Metrics
	s.Fetcher = f
	return s, nil
}

// cronLogger sends robfig/cron's own messages to the log: its routine
// ones (start, wake, run) at Debug, a tick skipped because the last one is
// still running at Warn, and its errors (a panic recovered) at Error.
type cronLogger struct{ log *slog.Logger }

var _ cron.Logger = cronLogger{}

func (c cronLogger) Info(msg string, kv ...any) {
	if msg == "skip" {
		c.log.Warn("tick skipped: the previous one is still running", kv...)
		return
	}
	c.log.Debug("cron "+msg, kv...)
}

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.log.Error("cron "+msg, append([]any{"error", err}, kv...)...)
}
