package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"reconcile"
	"reconcile/ledger"
	"reconcile/reports"
)

const scheduleSynopsis = `reconcile schedule [--config FILE] [--dsn DSN]

Runs until SIGINT or SIGTERM. At each tick of the config's schedule (default
"0 3 * * *" in the schedule's time zone) it reconciles the previous business
date of every configured channel, one run at a time. A run in progress when
the signal arrives is rolled back and recorded as failed; nothing is left
half-written.`

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
	s := &Scheduler{
		Config: cfg,
		Job:    &Job{DB: db, Notifier: a.notifier(cfg, false), Now: a.Now, Log: logw, Top: cfg.Slack.Top},
		Now:    a.Now,
		Log:    logw,
	}
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

// Scheduler decides what a tick reconciles.
type Scheduler struct {
	Config Config
	Job    *Job
	Now    func() time.Time
	Log    io.Writer
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

// Tick reconciles, for every channel, the business date before today in
// the channel's time zone. Runs go one at a time; a failed channel is
// alerted by the job and does not stop the others.
func (s *Scheduler) Tick(ctx context.Context) {
	for _, spec := range s.Due() {
		if ctx.Err() != nil {
			return
		}
		if _, err := s.Job.Run(ctx, spec); err != nil {
			fmt.Fprintf(s.Log, "schedule: %s %s failed: %s\n", spec.Channel, spec.Day, reports.RedactSecrets(oneLine(err.Error())))
			continue
		}
		fmt.Fprintf(s.Log, "schedule: %s %s done\n", spec.Channel, spec.Day)
	}
}

// Due lists the runs a tick at Now does.
func (s *Scheduler) Due() []RunSpec {
	now := s.Now()
	var specs []RunSpec
	for _, ch := range s.Config.Channels {
		loc, err := time.LoadLocation(ch.TimeZone)
		if err != nil {
			continue // LoadConfig refuses such a config
		}
		local := now.In(loc)
		yesterday := time.Date(local.Year(), local.Month(), local.Day()-1, 0, 0, 0, 0, loc)
		day := reconcile.BusinessDay{Date: yesterday, Location: loc}
		specs = append(specs, RunSpec{
			Channel: ch.Name,
			Format:  ch.Format,
			File:    ch.FilePath(yesterday),
			Day:     day,
			OutDir:  fmt.Sprintf("%s/%s/%s", s.Config.OutDir, day, ch.Name),
			Feed:    ch.feed(),
		})
	}
	return specs
}
