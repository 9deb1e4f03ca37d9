package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"reconcile/config"
	"reconcile/ledger"
	"reconcile/nightly"
	"reconcile/reports"
	"reconcile/retry"
)

// The wiring every command shares: its flags, config, database, job and
// where its alerts go.

// common are the flags most commands share: where the database and the
// config are, and how much to log.
type common struct {
	dsn, config string
	level       *logLevel
}

// commonFlags adds --dsn, --config and --log-level to fs.
func commonFlags(fs *flag.FlagSet) *common {
	c := &common{}
	fs.StringVar(&c.dsn, "dsn", "", "PostgreSQL `DSN` (default: $RECONCILE_DATABASE_URL)")
	fs.StringVar(&c.config, "config", "", "config `FILE` (JSON)")
	c.level = logLevelFlag(fs)
	return c
}

// loadConfig loads the config file of --config (none: the defaults); a
// config that cannot be used is a usage error of cmd.
func loadConfig(cmd, path string) (config.Config, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return config.Config{}, usagef(cmd, "%s", err)
	}
	return cfg, nil
}

// dsn is the database of cmd: --dsn, else the variable the config names,
// read as every secret is (config.EnvSecret).
func (a *App) dsn(cmd, flag string, cfg config.Config) (string, error) {
	if flag != "" {
		return flag, nil
	}
	dsn, err := config.EnvSecret(a.Getenv, cfg.DatabaseURLEnv)
	if err != nil {
		return "", usagef(cmd, "database: %s", err)
	}
	if dsn != "" {
		return dsn, nil
	}
	hint := ""
	if cmd == "run" {
		hint = " (or try 'reconcile demo')"
	}
	return "", usagef(cmd, "no database: pass --dsn or set %s%s", cfg.DatabaseURLEnv, hint)
}

// openDB opens the database of cmd (see dsn).
func (a *App) openDB(ctx context.Context, cmd, flag string, cfg config.Config) (*ledger.DB, error) {
	dsn, err := a.dsn(cmd, flag, cfg)
	if err != nil {
		return nil, err
	}
	return ledger.Open(ctx, dsn)
}

// newJob returns a job configured by cfg, without its database.
func (a *App) newJob(cfg config.Config, n reports.Notifier) *nightly.Job {
	return &nightly.Job{Notifier: n, Config: cfg, Now: a.Now, Log: a.newLogger(nil)}
}

// alertingJob returns a job configured by cfg on db, logging to log, whose
// alerts go where the config says.
func (a *App) alertingJob(cfg config.Config, db *ledger.DB, log *slog.Logger) (*nightly.Job, error) {
	n, err := a.notifier(cfg, false)
	if err != nil {
		return nil, err
	}
	job := a.newJob(cfg, n)
	job.DB, job.Log = db, log
	return job, nil
}

// openJob opens the database of cmd (see dsn) and returns an alerting job
// on it; the caller closes job.DB.
func (a *App) openJob(ctx context.Context, cmd, flag string, cfg config.Config, log *slog.Logger) (*nightly.Job, error) {
	db, err := a.openDB(ctx, cmd, flag, cfg)
	if err != nil {
		return nil, err
	}
	job, err := a.alertingJob(cfg, db, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	return job, nil
}

// notifier picks where alerts go: printed on a dry run; else a Slack bot
// with token and channel; else a webhook; else printed. The token and the
// webhook are read as every secret is (config.Slack.Secrets).
func (a *App) notifier(cfg config.Config, dryRun bool) (reports.Notifier, error) {
	if dryRun {
		return reports.NewPrintNotifier(a.Stdout), nil
	}
	token, webhook, err := cfg.Slack.Secrets(a.Getenv)
	if err != nil {
		return nil, err
	}
	channel := cfg.Slack.Channel
	if channel == "" {
		channel = a.Getenv(cfg.Slack.ChannelEnv)
	}
	policy := retry.Policy{Attempts: cfg.Slack.RetryAttempts, Budget: time.Duration(cfg.Slack.RetryBudget), Sleep: a.Sleep}
	if token != "" && channel != "" {
		return reports.NewBotNotifier(token, channel, policy, a.SlackOptions...), nil
	}
	if webhook != "" {
		return reports.NewWebhookNotifier(webhook, a.HTTPClient, policy), nil
	}
	return reports.NewPrintNotifier(a.Stdout), nil
}
