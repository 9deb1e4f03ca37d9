package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"reconcile"
	"reconcile/fixtures"
	"reconcile/ledger"
	"reconcile/ledger/tempdb"
	"reconcile/reports"
)

const demoSynopsis = `reconcile demo [--out DIR]

Runs the whole job on the bundled fixtures: a WeChat Pay bill for 2026-11-28
and the matching local records. Without RECONCILE_DATABASE_URL it starts a
throwaway PostgreSQL from this machine's server binaries and stops it after.
Copies the bill to DIR/inbox, writes the workbook and summary.json under
DIR/2026-11-28/wechatpay, and prints the Slack message it would send.`

func (a *App) demoCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("demo", demoSynopsis)
	out := fs.String("out", "out", "output `DIR`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg := DefaultConfig()
	dsn := a.Getenv(cfg.DatabaseURLEnv)
	if dsn == "" {
		fmt.Fprintln(a.Stderr, "demo: starting a throwaway PostgreSQL …")
		srv, err := tempdb.Start(ctx, tempdb.Options{})
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				fmt.Fprintf(a.Stderr, "demo: stopping PostgreSQL: %s\n", err)
			}
		}()
		dsn = srv.DSN("postgres")
	} else {
		fmt.Fprintf(a.Stderr, "demo: using the database in %s\n", cfg.DatabaseURLEnv)
	}

	db, err := ledger.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	if err := db.Exec(ctx, fixtures.LocalSQL); err != nil {
		return fmt.Errorf("demo: load fixtures: %w", err)
	}

	// The bill goes through the same path a real run takes: a file in an
	// inbox, left there so the reader can open what was reconciled.
	inbox := filepath.Join(*out, "inbox")
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		return err
	}
	bill := filepath.Join(inbox, fixtures.WeChatPayBillName)
	if err := os.WriteFile(bill, fixtures.WeChatPayBill, 0o644); err != nil {
		return err
	}
	loc, err := time.LoadLocation(fixtures.TimeZone)
	if err != nil {
		return err
	}
	day, err := reconcile.NewBusinessDay(fixtures.Date, loc)
	if err != nil {
		return err
	}
	spec := RunSpec{
		Channel: fixtures.Channel,
		Format:  fixtures.Format,
		File:    bill,
		Day:     day,
		OutDir:  filepath.Join(*out, fixtures.Date, fixtures.Channel),
	}
	job := &Job{DB: db, Notifier: headedNotifier{a.Stdout, reports.NewPrintNotifier(a.Stdout)}, Now: a.Now, Log: a.Stderr, Top: cfg.Slack.Top}
	res, err := job.Run(ctx, spec)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "\nrun %s: %d rows, %d findings need review, %d reversed automatically\n",
		res.Run.ID, res.ChannelRows, res.NeedsReview(), res.AutoReversed())
	fmt.Fprintf(a.Stdout, "workbook: %s\nsummary:  %s\n",
		filepath.Join(spec.OutDir, reports.WorkbookName(spec.Channel, day)), filepath.Join(spec.OutDir, "summary.json"))
	return nil
}

// headedNotifier introduces the printed alert, so a reader of the demo
// knows what they are looking at.
type headedNotifier struct {
	w io.Writer
	reports.Notifier
}

func (h headedNotifier) Notify(ctx context.Context, msg reports.Message, attachment string) error {
	fmt.Fprint(h.w, "\nThe Slack message this run would send:\n\n")
	return h.Notifier.Notify(ctx, msg, attachment)
}
