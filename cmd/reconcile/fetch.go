package main

import (
	"context"
	"errors"
	"fmt"

	"reconcile"
	"reconcile/config"
	"reconcile/ledger"
	"reconcile/metrics"
	"reconcile/nightly"
	"reconcile/reports"
)

const fetchSynopsis = `reconcile fetch --date YYYY-MM-DD [--channel NAME] [--force] [--config FILE]
           [--dsn DSN] [--log-level LEVEL]

Downloads a channel's settlement file of the business date from the channel
(its API, or an SFTP drop) into the place its path template names, and says
where it put it. Without --channel, every channel with a fetch block. A file
already there is left alone; --force asks the channel again, and a file with
new content (a bill the channel corrected) replaces it, the old one kept
beside it as NAME.superseded-<sha12>: the next run of that date supersedes
the run of the old file.

A download goes to a hidden file beside its destination and is checked (the
hash or size the channel states, and the channel's parser reading it whole)
before it is renamed into place: a refused or half-done download leaves
nothing a run would pick up.

Adyen's reports are per settlement batch: a fetch takes every batch after the
last one fetched (remembered in the database, so --dsn is needed) and files
each under the business date of its latest payment or refund. A batch whose
date holds another batch, or a file no batch was filed as, or whose rows are
dated outside the channel's row_window, is held aside (kept under another
name, not reconciled) and the fetch exits 1 naming it; --force files a batch
over a date's file that no batch was filed as, keeping that file.

Exit status 0 when every file is there, not ready yet, or the channel has no
bill for the date; 1 when a channel refused, the file it handed out was
refused (not the hash or size it stated, or not read by its parser), a batch
was held aside, or a fetch failed.`

func (a *App) fetchCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("fetch", fetchSynopsis)
	date := fs.String("date", "", "business date `YYYY-MM-DD` (required)")
	channel := fs.String("channel", "", "channel `NAME` (default: every channel with a fetch block)")
	force := fs.Bool("force", false, "ask the channel again even when the file is there")
	c := commonFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *date == "" {
		return usagef("fetch", "--date is required")
	}
	if c.config == "" {
		return usagef("fetch", "--config is required: it says where each channel's file comes from")
	}
	cfg, err := loadConfig("fetch", c.config)
	if err != nil {
		return err
	}
	var channels []config.Channel
	for _, ch := range cfg.Channels {
		if ch.Fetch != nil && (*channel == "" || ch.Name == *channel) {
			channels = append(channels, ch)
		}
	}
	switch {
	case *channel != "" && len(channels) == 0:
		if err := reconcile.CheckChannelName(*channel); err != nil {
			return usagef("fetch", "--channel: %s", err)
		}
		if _, ok := cfg.Lookup(*channel); !ok {
			return usagef("fetch", "--channel %s: not in the config", reconcile.Quote(*channel))
		}
		return usagef("fetch", "channel %s has no fetch block in the config", reconcile.Quote(*channel))
	case len(channels) == 0:
		return usagef("fetch", "no channel in config %s has a fetch block", c.config)
	}
	for _, ch := range channels {
		if msg := config.TemplateTrouble(ch.Path); msg != "" {
			return usagef("fetch", "channel %s: %s", reconcile.Quote(ch.Name), msg)
		}
	}
	var db *ledger.DB
	if needsDB(channels) {
		if db, err = a.openDB(ctx, "fetch", c.dsn, cfg); err != nil {
			return err
		}
		defer db.Close()
	}
	f, err := a.fetcher(channels, db)
	if err != nil {
		return err
	}
	f.Log = a.newLogger(c.level)
	var failed []error
	for _, ch := range channels {
		day, err := businessDay("fetch", ch, *date, "")
		if err != nil {
			return err
		}
		got := f.Fetch(ctx, ch, day, *force)
		fmt.Fprintln(a.Stdout, fetchLine(got))
		if metrics.FetchFailed(got.Result) {
			failed = append(failed, got.Err)
		}
	}
	return errors.Join(failed...)
}

// fetchLine says what a fetch did, for a person at a terminal.
func fetchLine(got nightly.Fetched) string {
	head := fmt.Sprintf("%s %s: ", got.Channel, got.Day)
	var s string
	switch got.Result {
	case "saved":
		s = fmt.Sprintf("fetched into %s (%d bytes)", got.Path, got.Bytes)
	case "unchanged":
		s = "already there, unchanged: " + got.Path
	case "not_ready":
		s = "not ready yet at the channel; nothing written"
	case "no_bill":
		s = "the channel has no bill for this date (a day without transactions?); nothing written"
	default:
		s = "not fetched: " + reconcile.FirstLine(reports.ErrorText(got.Err))
	}
	for _, b := range got.Batches {
		if b.Day.String() != got.Day.String() {
			s += fmt.Sprintf("; batch %d filed under %s: %s", b.Number, b.Day, b.Path)
		}
	}
	return head + s
}
