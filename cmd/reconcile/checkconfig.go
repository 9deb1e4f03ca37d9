package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/robfig/cron/v3"

	"reconcile"
	"reconcile/bankfeed"
	"reconcile/config"
	"reconcile/inputfile"
	"reconcile/ledger"
	"reconcile/nightly"
	"reconcile/reports"
)

const checkConfigSynopsis = `reconcile check-config [--config FILE] [--dsn DSN]

Checks, before 03:00 rather than at it, everything the job reads: the config
file (syntax, unknown keys, time zones, path templates, formats, mappings,
durations, the schedule), the Slack and database settings in the
environment (the database is asked, within 5 seconds, whether it answers
and whether its schema is current) and the out directory. Every problem is
one line naming the file, line and setting; secrets are never printed, only
the names of the variables holding them.

Then it shows what the next tick of 'reconcile schedule' would do: per
channel, the business dates due (within the lookback window and not yet
reconciled; without the database, every date of the window) and whether
each date's file is there, and which missing ones are overdue.

Exit status 0 when there is no problem, 1 when there is any.`

// dbCheckTimeout bounds how long check-config waits for the database.
const dbCheckTimeout = 5 * time.Second

func (a *App) checkConfigCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("check-config", checkConfigSynopsis)
	cfgFile := fs.String("config", "", "config `FILE` (JSON; default: the built-in defaults, which name no channels)")
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` (default: the variable the config names, $RECONCILE_DATABASE_URL)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ck := &configCheck{file: *cfgFile, w: a.Stdout}
	cfg, ok := ck.load()
	if ok {
		ck.slack(cfg, a.Getenv)
		db := ck.database(ctx, cfg, *dsn, a.Getenv)
		if db != nil {
			defer db.Close()
		}
		ck.outDir(cfg.OutDir)
		ck.fetches(cfg, a)
		ck.newKeyChecks(ctx, cfg, db)
		ck.disputes(ctx, cfg, db)
		ck.payouts(cfg)
		ck.nextTick(ctx, cfg, db, a.Now())
	}
	what := "the built-in defaults"
	if *cfgFile != "" {
		what = "config " + *cfgFile
	}
	switch n := len(ck.problems); n {
	case 0:
		fmt.Fprintf(a.Stdout, "\n%s: no problems\n", what)
		return nil
	case 1:
		return fmt.Errorf("%s: 1 problem (the line starting with \"problem:\" above)", what)
	default:
		return fmt.Errorf("%s: %d problems (the lines starting with \"problem:\" above)", what, n)
	}
}

// configCheck collects what check-config finds, printing each line as it
// goes; problems are counted for the exit status.
type configCheck struct {
	file     string
	w        io.Writer
	checked  *config.Checked // nil without a file
	problems []string
}

func (ck *configCheck) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	ck.problems = append(ck.problems, msg)
	fmt.Fprintf(ck.w, "problem: %s\n", msg)
}

func (ck *configCheck) ok(format string, args ...any) {
	fmt.Fprintf(ck.w, "ok: %s\n", fmt.Sprintf(format, args...))
}

func (ck *configCheck) note(format string, args ...any) {
	fmt.Fprintf(ck.w, "note: %s\n", fmt.Sprintf(format, args...))
}

// at is where a setting is, for the start of a problem line (see
// config.Checked.At); "" without a file.
func (ck *configCheck) at(path string) string {
	if ck.checked == nil {
		return ""
	}
	return ck.checked.At(path)
}

// load reads the config as config.Check does, printing every problem of
// the file in the order of their lines. ok is false when the file could
// not be read as JSON at all: then nothing else can be checked.
func (ck *configCheck) load() (cfg config.Config, ok bool) {
	if ck.file == "" {
		ck.note("no --config: checking the built-in defaults (no channels; database and Slack from the default variables)")
		return config.Default(), true
	}
	c, err := config.Check(ck.file)
	if err != nil {
		ck.problem("%s", err)
		return config.Config{}, false
	}
	ck.checked = c
	fmt.Fprintf(ck.w, "config %s: %d channels\n", ck.file, len(c.Decoded.Config.Channels))
	for _, p := range c.Problems {
		ck.problem("%s", p)
	}
	return c.Decoded.Config, true
}

// slack checks the Slack variables the config names, never printing
// their values: a token or a webhook URL is a secret, read as a run reads
// it (config.Slack.Secrets).
func (ck *configCheck) slack(cfg config.Config, getenv func(string) string) {
	s := cfg.Slack
	tokenValue, webhook, err := s.Secrets(getenv)
	if err != nil {
		ck.problem("%s", err)
		return
	}
	token := tokenValue != ""
	channel, from := s.Channel, "slack.channel"
	if channel == "" {
		channel, from = getenv(s.ChannelEnv), "$"+s.ChannelEnv
	}
	webhookOK := false
	if webhook != "" {
		u, err := url.Parse(webhook)
		webhookOK = err == nil && u.Scheme == "https" && u.Host != ""
		if !webhookOK {
			ck.problem("slack: $%s is set but is not an https URL (it should be the incoming webhook's https://hooks.slack.com/… address)", s.WebhookEnv)
		}
	}
	switch {
	case token && channel == "":
		ck.problem("slack: $%s is set but no channel is: set slack.channel in the config or $%s", s.TokenEnv, s.ChannelEnv)
	case token:
		ck.ok("slack: alerts posted by the bot ($%s) to %s (from %s), workbook attached", s.TokenEnv, channel, from)
	case webhookOK:
		ck.ok("slack: alerts sent to the incoming webhook in $%s (the message only, no workbook)", s.WebhookEnv)
	case webhook == "":
		ck.note("slack: neither $%s nor $%s is set: alerts are printed on stdout", s.TokenEnv, s.WebhookEnv)
	}
}

// database checks that the database answers and its schema is current, and
// returns it open then (nil otherwise). Only the variable's name is
// printed, never the DSN.
func (ck *configCheck) database(ctx context.Context, cfg config.Config, dsn string, getenv func(string) string) *ledger.DB {
	from := "--dsn"
	if dsn == "" {
		var err error
		from = "$" + cfg.DatabaseURLEnv
		if dsn, err = config.EnvSecret(getenv, cfg.DatabaseURLEnv); err != nil {
			ck.problem("database: %s", err)
			return nil
		}
	}
	if dsn == "" {
		ck.problem("database: %s is not set: run and schedule need it (the DSN of the job's PostgreSQL)", from)
		return nil
	}
	tctx, cancel := context.WithTimeout(ctx, dbCheckTimeout)
	defer cancel()
	db, err := ledger.Open(tctx, dsn)
	if err != nil {
		ck.problem("database (%s): unreachable: %s", from, dbTrouble(tctx, err))
		return nil
	}
	missing, err := db.Unapplied(tctx)
	if err != nil {
		db.Close()
		ck.problem("database (%s): cannot read its schema version: %s", from, dbTrouble(tctx, err))
		return nil
	}
	all, _ := ledger.Migrations()
	if len(missing) > 0 {
		db.Close()
		ck.problem("database (%s): schema not current: %d of %d migrations not applied (%s): run 'reconcile migrate'",
			from, len(missing), len(all), strings.Join(missing, ", "))
		return nil
	}
	ck.ok("database (%s): reachable, schema current (%d migrations)", from, len(all))
	return db
}

// newKeyChecks says, per channel, which checks of money moved twice
// under new keys are on: the duplicate windows, the fee contract, and
// whether the local orders carry the customer the payment check needs.
func (ck *configCheck) newKeyChecks(ctx context.Context, cfg config.Config, db *ledger.DB) {
	if len(cfg.Channels) == 0 {
		return
	}
	customers := "unknown without the database"
	if db != nil {
		tctx, cancel := context.WithTimeout(ctx, dbCheckTimeout)
		has, err := db.HasCustomers(tctx)
		cancel()
		switch {
		case err != nil:
			customers = "unknown: " + dbTrouble(ctx, err)
		case has:
			customers = ""
		default:
			customers = "off: the local orders have no user_id and created_at (see the README: pointing it at your own tables)"
		}
	}
	for _, ch := range cfg.Channels {
		if !ch.Statement() { // a bank account's checks are its payouts'
			ck.ok("checks of %s: %s", reconcile.Quote(ch.Name), ch.NewKeyChecks(customers))
		}
	}
}

// disputes says whether the merchant's record of disputes, where the
// config names one, serves: the relation and its columns.
func (ck *configCheck) disputes(ctx context.Context, cfg config.Config, db *ledger.DB) {
	d := cfg.Disputes
	if !d.On() {
		return
	}
	if db == nil {
		ck.note("disputes: %s not looked at without the database", reconcile.Quote(d.Relation))
		return
	}
	tctx, cancel := context.WithTimeout(ctx, dbCheckTimeout)
	err := db.CheckDisputes(tctx, d.Relation)
	cancel()
	if err != nil {
		ck.problem("%sdisputes.relation: %s", ck.at("disputes.relation"), err)
		return
	}
	ck.ok("disputes: chargebacks checked against %s; a recorded dispute waits %s for its chargeback", reconcile.Quote(d.Relation), d.Wait())
}

// payouts says which channels' payouts are looked for on which bank
// accounts' statements, and a channel whose payouts nothing would find.
func (ck *configCheck) payouts(cfg config.Config) {
	var banks []string
	for _, ch := range cfg.Channels {
		if ch.Statement() {
			banks = append(banks, ch.Name)
			ck.ok("%s: bank account %s, %s statements from %s", ch.Name, reconcile.Quote(strings.Join(ch.Account, ", ")), ch.Format, ch.Path)
		}
	}
	for i, ch := range cfg.Channels {
		if ch.Statement() || ch.Payouts == nil {
			continue
		}
		terms := ch.Terms()
		if len(banks) == 0 {
			at, _ := ch.Where(i)
			ck.problem("%s%s: payouts are set, but no bank account (format %s) is configured to find them on", ck.at(at+".payouts"),
				ch.Name, strings.Join(bankfeed.Formats(), ", "))
			continue
		}
		how := "by reference only (no counterparties)"
		if len(terms.Counterparties) > 0 {
			how = "by reference, else by amount from " + strings.Join(terms.Counterparties, ", ")
		}
		ck.ok("%s: payouts looked for on %s %s, %d days allowed after the expected date (%d after the business date when the file gives none)",
			ch.Name, strings.Join(banks, ", "), how, terms.Window, ch.PayoutDelay())
	}
}

// dbTrouble says in a few words why the database could not be used,
// without the DSN: pgx's messages quote parts of it.
func dbTrouble(ctx context.Context, err error) string {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", dbCheckTimeout)
	case errors.As(err, &pgErr):
		return fmt.Sprintf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return reports.RedactSecrets(msg)
}

// fetches checks every fetch block as the fetch would use it: its
// secrets are there, its key files read and parse, the SFTP host's key
// is in known_hosts. Nothing is sent to a channel.
func (ck *configCheck) fetches(cfg config.Config, a *App) {
	fetching := false
	for _, ch := range cfg.Channels {
		fetching = fetching || ch.Fetch != nil
	}
	if sched, err := cron.ParseStandard(cfg.Schedule.Spec); err == nil && fetching {
		if loc, err := time.LoadLocation(cfg.Schedule.TimeZone); err == nil {
			next := sched.Next(a.Now().In(loc))
			if gap := sched.Next(next).Sub(next); gap > 6*time.Hour {
				ck.note("schedule.spec %s ticks %s apart: a file a channel makes after a tick is fetched and reconciled at the next one; "+
					"channels with a fetch block want ticks through the day, such as \"0 * * * *\"", reconcile.Quote(cfg.Schedule.Spec), gap)
			}
		}
	}
	for i, ch := range cfg.Channels {
		if ch.Fetch == nil || ch.Fetch.API() == "" {
			continue
		}
		at, _ := ch.Where(i)
		c, err := a.fetchSource(ch)
		if err != nil {
			ck.problem("%s%s", ck.at(at+".fetch"), reports.RedactSecrets(err.Error()))
			continue
		}
		after := ch.Fetch.AvailableAt(time.Time{}).Sub(time.Time{})
		ck.ok("fetch of %s: %s %s; asked for from %s after the end of each day (%s)",
			reconcile.Quote(ch.Name), ch.Fetch.API(), c.About, after, ch.TimeZone)
	}
}

// outDir checks that runs can write their reports.
func (ck *configCheck) outDir(dir string) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		ck.note("out_dir %s does not exist yet: the first run creates it", dir)
	case err != nil:
		ck.problem("%sout_dir %s: %s", ck.at("out_dir"), dir, err)
	case !st.IsDir():
		ck.problem("%sout_dir %s is not a directory", ck.at("out_dir"), dir)
	default:
		f, err := os.CreateTemp(dir, ".reconcile-check-*")
		if err != nil {
			ck.problem("%sout_dir %s is not writable: %s", ck.at("out_dir"), dir, errors.Unwrap(err))
			return
		}
		f.Close()
		os.Remove(f.Name())
		ck.ok("out_dir %s: writable", dir)
	}
}

// nextTick prints when `reconcile schedule` would tick next and what that
// tick would find, per channel, through the scheduler's own Plan.
func (ck *configCheck) nextTick(ctx context.Context, cfg config.Config, db *ledger.DB, now time.Time) {
	loc, zoneErr := time.LoadLocation(cfg.Schedule.TimeZone)
	// As `schedule` reads it: cron.New's parser is the standard one.
	sched, specErr := cron.ParseStandard(cfg.Schedule.Spec)
	if zoneErr != nil || specErr != nil {
		fmt.Fprintln(ck.w, "\nNext tick: unknown until schedule.spec and schedule.time_zone are mended.")
		return
	}
	next := sched.Next(now.In(loc))
	fmt.Fprintf(ck.w, "\nNext tick: %s (schedule %s in %s)\n", next.Format(time.RFC3339), reconcile.Quote(cfg.Schedule.Spec), loc)
	if len(cfg.Channels) == 0 {
		return
	}
	lookback := cfg.Schedule.LookbackDays
	if db == nil {
		fmt.Fprintf(ck.w, "Without a usable database the dates cannot be checked against past runs: every date of the lookback window (%d days) is listed, files as they are now.\n", lookback)
	} else {
		fmt.Fprintf(ck.w, "Dates due: in the lookback window (%d days) and not yet reconciled; files as they are now.\n", lookback)
	}
	for i, ch := range cfg.Channels {
		_, where := ch.Where(i)
		if ch.Name != "" {
			where = ch.Name
		}
		if _, err := time.LoadLocation(ch.TimeZone); err != nil {
			fmt.Fprintf(ck.w, "  %s: dates unknown until its time_zone is mended\n", where)
			continue
		}
		if ch.Path == "" {
			fmt.Fprintf(ck.w, "  %s (%s): no path template, so no file is looked for\n", where, ch.TimeZone)
			continue
		}
		one := cfg
		one.Channels = cfg.Channels[i : i+1]
		s := &nightly.Scheduler{Config: one, Job: &nightly.Job{DB: db}, Now: func() time.Time { return next }}
		due, err := s.Plan(ctx)
		if err != nil {
			ck.problem("database: cannot read past runs of %s: %s", where, dbTrouble(ctx, err))
			continue
		}
		switch {
		case db == nil:
			fmt.Fprintf(ck.w, "  %s (%s): %d dates\n", where, ch.TimeZone, len(due))
		case len(due) == 0:
			fmt.Fprintf(ck.w, "  %s (%s): nothing due: every date of the window is reconciled\n", where, ch.TimeZone)
		default:
			fmt.Fprintf(ck.w, "  %s (%s): %d of %d dates due\n", where, ch.TimeZone, len(due), lookback)
		}
		for _, d := range due {
			state := "missing"
			if d.Ready {
				state = "found"
				if err := readable(d.Spec.File); err != nil {
					state = "unreadable"
					ck.problem("%s: %s: %s", where, d.Spec.Day, err)
				}
			}
			line := fmt.Sprintf("    %s  %-10s %s", d.Spec.Day, state, d.Spec.File)
			if d.Overdue {
				line += "  overdue since " + d.Deadline.Format(time.RFC3339)
			}
			fmt.Fprintln(ck.w, line)
		}
	}
}

// readable is nil when path is a regular file the job can open, opened
// as a run opens it: a named pipe is refused, not waited on.
func readable(path string) error {
	f, err := inputfile.Open(path, "settlement file")
	if err != nil {
		return err
	}
	return f.Close()
}
