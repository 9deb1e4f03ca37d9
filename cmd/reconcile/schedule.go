package main

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/robfig/cron/v3"

	"reconcile"
	"reconcile/channelfeed"
	"reconcile/ledger"
	"reconcile/reports"
)

const scheduleSynopsis = `reconcile schedule [--config FILE] [--dsn DSN] [--log-level LEVEL]
                   [--metrics-listen ADDR]

Runs until SIGINT or SIGTERM. At each tick of the config's schedule (default
"0 3 * * *" in the schedule's time zone) it reconciles, for every configured
channel and in date order, each business date of the lookback window
(default 7 days) whose file is there and has no successful run yet. A file
not there yet is waited for; past the channel's deadline it is alerted, once.
Alerts that could not be sent are sent again. Several replicas can run side
by side: runs of one channel and date take turns, and a file already
reconciled is not redone. A run in progress when the signal arrives is rolled
back and recorded as failed; nothing is left half-written.

With --metrics-listen (or the config's metrics.listen) it serves Prometheus
metrics on /metrics and a health check on /healthz.`

func (a *App) scheduleCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("schedule", scheduleSynopsis)
	config := fs.String("config", "", "config `FILE` (JSON, required)")
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` (default: $RECONCILE_DATABASE_URL)")
	level := logLevelFlag(fs)
	metricsListen := fs.String("metrics-listen", "", "serve /metrics and /healthz on `ADDR`, such as 127.0.0.1:9464 (default: the config's metrics.listen, else none)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *config == "" {
		return usagef("schedule", "--config is required: it names the channels")
	}
	cfg, err := LoadConfig(*config)
	if err != nil {
		return usagef("schedule", "%s", err)
	}
	if *metricsListen != "" {
		if err := checkListen(*metricsListen); err != nil {
			return usagef("schedule", "--metrics-listen: %s", err)
		}
		cfg.Metrics.Listen = *metricsListen
	}
	if len(cfg.Channels) == 0 {
		return usagef("schedule", "config %s names no channels", *config)
	}
	if *dsn == "" {
		*dsn = a.Getenv(cfg.DatabaseURLEnv)
	}
	if *dsn == "" {
		return usagef("schedule", "no database: pass --dsn or set %s", cfg.DatabaseURLEnv)
	}
	db, err := ledger.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	// Ticks log from cron's goroutines while this one logs too; slog's
	// handlers write each line whole.
	logger := a.newLogger(level)
	job := a.newJob(cfg, a.notifier(cfg, false))
	job.DB, job.Log = db, logger
	s := &Scheduler{Config: cfg, Job: job, Now: a.Now, Log: logger}
	s.Metrics = a.scheduleObserver(cfg, job)
	loc, _ := time.LoadLocation(cfg.Schedule.TimeZone) // validated by LoadConfig
	cl := cronLogger{logger}
	c := cron.New(
		cron.WithLocation(loc),
		cron.WithLogger(cl),
		cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)),
	)
	if _, err := c.AddFunc(cfg.Schedule.Spec, func() { s.Tick(ctx) }); err != nil {
		return usagef("schedule", "schedule.spec %s: %s", reconcile.Quote(cfg.Schedule.Spec), err)
	}
	stopMetrics, err := s.Metrics.serve(cfg.Metrics, db, func() { c.Entries() }, logger)
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

// Scheduler decides what a tick reconciles, and does it.
type Scheduler struct {
	Config Config
	Job    *Job
	Now    func() time.Time
	Log    *slog.Logger // nil: nothing is logged
	// Metrics is told of every run, overdue file and sign of life; nil
	// when metrics are off.
	Metrics *observer
}

func (s *Scheduler) log() *slog.Logger {
	if s.Log == nil {
		return discardLogger
	}
	return s.Log
}

// Due is one date of one channel a tick looked at.
type Due struct {
	Spec RunSpec
	// Ready is false when the file is not there yet; Overdue when it is
	// still not there past the channel's deadline.
	Ready, Overdue bool
	Deadline       time.Time
}

// Plan lists, per channel and in date order, every business date of the
// lookback window before today (in the channel's zone) whose file has no
// successful run yet: a night missed by downtime is caught up on the next
// tick. A file not there is not ready: no run, so no false flood of
// missing_channel findings.
func (s *Scheduler) Plan(ctx context.Context) ([]Due, error) {
	now := s.Now()
	var due []Due
	for _, ch := range s.Config.Channels {
		loc, err := time.LoadLocation(ch.TimeZone)
		if err != nil {
			continue // LoadConfig refuses such a config
		}
		local := now.In(loc)
		for back := s.Config.Schedule.LookbackDays; back >= 1; back-- {
			date := time.Date(local.Year(), local.Month(), local.Day()-back, 0, 0, 0, 0, loc)
			day := reconcile.BusinessDay{Date: date, Location: loc}
			d := Due{
				Spec: RunSpec{
					Channel: ch.Name,
					Format:  ch.Format,
					File:    ch.FilePath(date),
					Day:     day,
					OutDir:  filepath.Join(s.Config.OutDir, day.String(), ch.Name),
					Grace:   ch.grace(),
					Feed:    ch.feed(day),
				},
				Deadline: ch.deadline(day.End()),
			}
			file, err := channelfeed.Fingerprint(d.Spec.File)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					// There but unreadable: a run says so, loudly.
					d.Ready = true
					due = append(due, d)
					continue
				}
				d.Overdue = now.After(d.Deadline)
				due = append(due, d)
				continue
			}
			if s.Job.DB == nil {
				// check-config without a database: past runs are
				// unknown, so every file there is listed.
				d.Ready = true
				due = append(due, d)
				continue
			}
			done, err := s.Job.DB.HasSuccess(ctx, ch.Name, day, file.SHA256)
			if err != nil {
				return nil, err
			}
			if !done {
				d.Ready = true
				due = append(due, d)
			}
		}
	}
	return due, nil
}

// Tick reconciles what Plan finds, one run at a time; alerts the files
// past their deadline, once per channel and date; and sends again the
// alerts of runs that could not be sent. A failed channel is alerted by the
// job and does not stop the others.
func (s *Scheduler) Tick(ctx context.Context) {
	s.Metrics.tickStarted()
	defer s.Metrics.tickDone()
	due, err := s.Plan(ctx)
	if err != nil {
		s.log().Error("tick not planned", "error", err)
		return
	}
	s.Metrics.planned(due)
	for _, d := range due {
		s.Metrics.beat()
		if ctx.Err() != nil {
			return
		}
		spec := d.Spec
		switch {
		case d.Ready:
			start := time.Now()
			res, err := s.Job.Run(ctx, spec)
			s.Metrics.ran(spec.Channel, res, err, time.Since(start))
			if err != nil {
				continue // the job has logged it, with its run id
			}
			s.log().Info("scheduled run done", "run_id", res.Run.ID, "channel", spec.Channel,
				"business_date", spec.Day.String(), "needs_review", res.NeedsReview(), "replay", res.Replay)
		case d.Overdue:
			// No run yet, so no run id: the channel and date say which.
			log := s.log().With("channel", spec.Channel, "business_date", spec.Day.String())
			first, err := s.Job.DB.ClaimOverdue(ctx, spec.Channel, spec.Day)
			if err != nil {
				log.Error("overdue file not claimed", "error", err)
				continue
			}
			if !first {
				continue
			}
			log.Warn("settlement file overdue", "file", spec.File, "deadline", d.Deadline)
			if err := s.Job.Notifier.Notify(alertFor(ctx, spec.Channel), reports.OverdueMessage(spec.Channel, spec.Day, spec.File, d.Deadline), "", nil); err != nil {
				log.Warn("overdue alert not sent", "error", err)
			}
		}
	}
	s.resendAlerts(ctx)
}

// resendAlerts sends the alerts that failed within the lookback window.
func (s *Scheduler) resendAlerts(ctx context.Context) {
	since := s.Now().AddDate(0, 0, -s.Config.Schedule.LookbackDays-1)
	ids, err := s.Job.DB.AlertsDue(ctx, since)
	if err != nil {
		s.log().Error("alerts to send again not read", "error", err)
		return
	}
	for _, id := range ids {
		sent, err := s.Job.Resend(ctx, id)
		switch {
		case err != nil:
			s.log().Warn("alert still not sent", "run_id", id, "error", err)
		case sent:
			s.log().Info("alert sent again", "run_id", id)
		}
	}
}
