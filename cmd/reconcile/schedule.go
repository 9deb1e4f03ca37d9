package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"path/filepath"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"reconcile"
	"reconcile/channelfeed"
	"reconcile/ledger"
	"reconcile/reports"
)

const scheduleSynopsis = `reconcile schedule [--config FILE] [--dsn DSN]

Runs until SIGINT or SIGTERM. At each tick of the config's schedule (default
"0 3 * * *" in the schedule's time zone) it reconciles, for every configured
channel and in date order, each business date of the lookback window
(default 7 days) whose file is there and has no successful run yet. A file
not there yet is waited for; past the channel's deadline it is alerted, once.
Alerts that could not be sent are sent again. Several replicas can run side
by side: runs of one channel and date take turns, and a file already
reconciled is not redone. A run in progress when the signal arrives is rolled
back and recorded as failed; nothing is left half-written.`

func (a *App) scheduleCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("schedule", scheduleSynopsis)
	config := fs.String("config", "", "config `FILE` (JSON, required)")
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` (default: $RECONCILE_DATABASE_URL)")
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

	// Ticks log from cron's goroutines while this one logs too.
	logw := &lockedWriter{w: a.Stderr}
	job := a.newJob(cfg, a.notifier(cfg, false))
	job.DB, job.Log = db, logw
	s := &Scheduler{Config: cfg, Job: job, Now: a.Now, Log: logw}
	loc, _ := time.LoadLocation(cfg.Schedule.TimeZone) // validated by LoadConfig
	logger := cron.PrintfLogger(log.New(logw, "schedule: ", log.LstdFlags))
	c := cron.New(
		cron.WithLocation(loc),
		cron.WithChain(cron.Recover(logger), cron.SkipIfStillRunning(logger)),
	)
	if _, err := c.AddFunc(cfg.Schedule.Spec, func() { s.Tick(ctx) }); err != nil {
		return usagef("schedule", "schedule.spec %q: %s", cfg.Schedule.Spec, err)
	}
	c.Start()
	next := c.Entries()[0].Next
	fmt.Fprintf(logw, "schedule: %d channels, %q in %s; next tick %s\n",
		len(cfg.Channels), cfg.Schedule.Spec, loc, next.Format(time.RFC3339))
	<-ctx.Done()
	// ctx is cancelled, so a run in progress rolls back; wait for it.
	<-c.Stop().Done()
	fmt.Fprintln(logw, "schedule: stopped")
	return nil
}

// Scheduler decides what a tick reconciles, and does it.
type Scheduler struct {
	Config Config
	Job    *Job
	Now    func() time.Time
	Log    io.Writer
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
					Feed:    ch.feed(),
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
	due, err := s.Plan(ctx)
	if err != nil {
		fmt.Fprintf(s.Log, "schedule: %s\n", reports.RedactSecrets(err.Error()))
		return
	}
	for _, d := range due {
		if ctx.Err() != nil {
			return
		}
		spec := d.Spec
		switch {
		case d.Ready:
			res, err := s.Job.Run(ctx, spec)
			if err != nil {
				fmt.Fprintf(s.Log, "schedule: %s %s failed: %s\n", spec.Channel, spec.Day, reports.RedactSecrets(oneLine(err.Error())))
				continue
			}
			fmt.Fprintf(s.Log, "schedule: %s %s done: %d need review\n", spec.Channel, spec.Day, res.NeedsReview())
		case d.Overdue:
			first, err := s.Job.DB.ClaimOverdue(ctx, spec.Channel, spec.Day)
			if err != nil {
				fmt.Fprintf(s.Log, "schedule: %s\n", reports.RedactSecrets(err.Error()))
				continue
			}
			if !first {
				continue
			}
			fmt.Fprintf(s.Log, "schedule: %s %s: file %s is overdue\n", spec.Channel, spec.Day, spec.File)
			if err := s.Job.Notifier.Notify(ctx, reports.OverdueMessage(spec.Channel, spec.Day, spec.File, d.Deadline), ""); err != nil {
				fmt.Fprintf(s.Log, "schedule: overdue alert not sent: %s\n", reports.RedactSecrets(err.Error()))
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
		fmt.Fprintf(s.Log, "schedule: %s\n", reports.RedactSecrets(err.Error()))
		return
	}
	for _, id := range ids {
		sent, err := s.Job.Resend(ctx, id)
		switch {
		case err != nil:
			fmt.Fprintf(s.Log, "schedule: alert of run %s still not sent: %s\n", id, reports.RedactSecrets(err.Error()))
		case sent:
			fmt.Fprintf(s.Log, "schedule: alert of run %s sent\n", id)
		}
	}
}

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
