package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"reconcile"
	"reconcile/config"
	"reconcile/fixtures"
	"reconcile/ledger"
	"reconcile/ledger/tempdb"
	"reconcile/nightly"
	"reconcile/reports"
)

const demoSynopsis = `reconcile demo [--out DIR] [--log-level LEVEL]

Runs the whole job on the bundled fixtures: settlement files of WeChat Pay,
Alipay, Stripe and Adyen for 2026-11-28 and the matching local records.
Without RECONCILE_DATABASE_URL it starts a throwaway PostgreSQL from this
machine's server binaries and stops it after. Copies the files to DIR/inbox,
writes a workbook and summary.json per channel under DIR/2026-11-28/CHANNEL,
and prints the Slack message each run would send.`

func (a *App) demoCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("demo", demoSynopsis)
	out := fs.String("out", "out", "output `DIR`")
	level := logLevelFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log := a.newLogger(level)
	cfg := config.Default()
	cfg.OutDir = *out
	db, stop, err := a.demoDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stop()

	// The bills go through the same path a real run takes: files in an
	// inbox, left there so the reader can open what was reconciled.
	inbox := filepath.Join(*out, "inbox")
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		return err
	}
	job := a.newJob(cfg, nil)
	job.DB, job.Log = db, log
	type done struct {
		spec nightly.RunSpec
		res  *reconcile.Result
	}
	var results []done
	channels, err := demoChannels()
	if err != nil {
		return err
	}
	cfg.Channels = channels
	for i, ch := range append(slices.Clone(fixtures.Channels), fixtures.Bank) {
		bill := filepath.Join(inbox, ch.BillName)
		if err := os.WriteFile(bill, ch.Bill(), 0o644); err != nil {
			return err
		}
		cc, date := channels[i], fixtures.Date
		if cc.Statement() {
			date = fixtures.BankDate
		}
		day, err := businessDay("demo", cc, date, "")
		if err != nil {
			return err
		}
		spec := nightly.NewSpec(cfg, cc, day)
		spec.File = bill
		job.Notifier = headedNotifier{a.Stdout, ch.Name, reports.NewPrintNotifier(a.Stdout)}
		res, err := job.Run(ctx, spec)
		if err != nil {
			return err
		}
		results = append(results, done{spec, res})
	}

	fmt.Fprintf(a.Stdout, "\n%-10s %6s %13s %16s  %s\n", "channel", "rows", "need review", "auto-reversed", "workbook and summary.json")
	for _, d := range results {
		fmt.Fprintf(a.Stdout, "%-10s %6d %13d %16d  %s\n", d.spec.Channel, d.res.ChannelRows, d.res.NeedsReview(),
			d.res.AutoReversed(), filepath.Join(d.spec.OutDir, reports.WorkbookName(d.spec.Channel, d.spec.Day)))
	}
	return nil
}

// demoChannels are the fixtures' channels and bank account as a config
// names them, in the order the demo runs them: their defaults, and their
// fee contracts and payout counterparties.
func demoChannels() ([]config.Channel, error) {
	var out []config.Channel
	for _, ch := range append(slices.Clone(fixtures.Channels), fixtures.Bank) {
		cc := config.Channel{Name: ch.Name, Format: ch.Format, TimeZone: ch.TimeZone}
		if ch.Account != "" {
			cc.Account = config.Accounts{ch.Account}
		}
		if ch.FeeContract != "" {
			cc.Fee = &config.FeeContract{}
			if err := json.Unmarshal([]byte(ch.FeeContract), cc.Fee); err != nil {
				return nil, fmt.Errorf("demo: %s's fee contract: %w", ch.Name, err)
			}
		}
		if len(ch.Counterparties) > 0 {
			cc.Payouts = &config.Payouts{Counterparties: ch.Counterparties}
		}
		out = append(out, cc)
	}
	return out, nil
}

// headedNotifier introduces the printed alert, so a reader of the demo
// knows what they are looking at.
type headedNotifier struct {
	w       io.Writer
	channel string
	reports.Notifier
}

func (h headedNotifier) Notify(ctx context.Context, msg reports.Message, attachment string, d *reports.Delivery) error {
	fmt.Fprintf(h.w, "\n── The Slack message the %s run would send ──\n\n", h.channel)
	return h.Notifier.Notify(ctx, msg, attachment, d)
}

// demoDatabase opens the demo's database, migrated and holding the
// fixtures' local records: the environment's, else a throwaway PostgreSQL
// that stop takes down again.
func (a *App) demoDatabase(ctx context.Context, cfg config.Config, log *slog.Logger) (*ledger.DB, func(), error) {
	stopServer := func() {}
	dsn, err := config.EnvSecret(a.Getenv, cfg.DatabaseURLEnv)
	if err != nil {
		return nil, nil, fmt.Errorf("demo: database: %w", err)
	}
	if dsn == "" {
		log.Info("demo: starting a throwaway PostgreSQL")
		srv, err := tempdb.Start(ctx, tempdb.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("demo: %w", err)
		}
		stopServer = func() {
			if err := srv.Stop(); err != nil {
				log.Warn("demo: stopping PostgreSQL failed", "error", err)
			}
		}
		dsn = srv.DSN("postgres")
	} else {
		log.Info("demo: using the database of the environment", "variable", cfg.DatabaseURLEnv)
	}
	db, err := ledger.Open(ctx, dsn)
	if err != nil {
		stopServer()
		return nil, nil, err
	}
	closing := func() { db.Close(); stopServer() }
	if _, err := db.Migrate(ctx); err != nil {
		closing()
		return nil, nil, err
	}
	for _, ch := range fixtures.Channels {
		if err := db.Exec(ctx, ch.LocalSQL()); err != nil {
			closing()
			return nil, nil, fmt.Errorf("demo: load %s fixtures: %w", ch.Name, err)
		}
	}
	return db, closing, nil
}
