package main

import (
	"context"
	"fmt"
)

const alertSynopsis = `reconcile alert --resend RUN_ID [--dsn DSN] [--config FILE] [--log-level LEVEL]

Sends the alert of a finished run whose alert could not be sent (Slack was
down, the token was wrong). A run whose alert was sent is not alerted again:
the command says so and exits 0. 'reconcile schedule' also sends such alerts
again on each tick.`

func (a *App) alertCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("alert", alertSynopsis)
	resend := fs.String("resend", "", "`RUN_ID` whose alert to send")
	c := commonFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *resend == "" {
		return usagef("alert", "--resend RUN_ID is required")
	}
	cfg, err := loadConfig("alert", c.config)
	if err != nil {
		return err
	}
	job, err := a.openJob(ctx, "alert", c.dsn, cfg, a.newLogger(c.level).With("run_id", *resend))
	if err != nil {
		return err
	}
	defer job.DB.Close()
	sent, err := job.Resend(ctx, *resend)
	if err != nil {
		return fmt.Errorf("alert of run %s: %w", *resend, err)
	}
	if !sent {
		fmt.Fprintf(a.Stdout, "run %s: its alert was sent already; not sent twice\n", *resend)
		return nil
	}
	fmt.Fprintf(a.Stdout, "run %s: alert sent\n", *resend)
	return nil
}
