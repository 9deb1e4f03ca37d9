package nightly

import (
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"reconcile"
	"reconcile/channelfeed"
	"reconcile/config"
)

// RunSpec is one reconciliation to do: a channel, a business date, a file.
type RunSpec struct {
	Channel string
	Format  string
	File    string
	Day     reconcile.BusinessDay
	OutDir  string
	DryRun  bool
	// Force re-evaluates a file whose run already succeeded, instead of
	// returning that run's result.
	Force bool
	// Grace is the cut-off window of the channel (see matcher.Options).
	Grace time.Duration
	// RefundWindow and PaymentWindow are the channel's duplicate windows,
	// Fees its fee contract (see matcher.Options).
	RefundWindow, PaymentWindow time.Duration
	Fees                        *reconcile.FeeContract
	// Disputes is the merchant's record of disputes, when it keeps one
	// (config.Disputes): its relation, and how long a recorded dispute
	// waits for a channel's chargeback.
	Disputes      string
	DisputeWindow time.Duration
	// Shard, when not the whole, limits the run to the keys of one shard;
	// `reconcile report` puts the shards' results together.
	Shard reconcile.Shard
	// Feed carries the channel's parser settings (Stripe metadata keys, a
	// column mapping, the row window); its Location is the business day's.
	Feed channelfeed.Options
	// PayoutDelay is how many days after the business date a payout of
	// the channel's file is expected when the file does not say.
	PayoutDelay int
	// Account is, for a bank statement's night, the account its
	// statements must be of; Terms are the payout terms of every channel
	// whose payouts it looks for, by channel.
	Account config.Accounts
	Terms   map[string]reconcile.PayoutTerms

	// fingerprint is the file's, taken before the run: its line
	// count sizes the index once, and the parse checks it reads the
	// same bytes.
	fingerprint *channelfeed.FileInfo
	// log is the run's logger: channel and business date attached, and
	// the run id once Job.Run has made one.
	log *slog.Logger
}

// expectRows is the file's line count, to size the index once; 0 when
// the file was not fingerprinted.
func (s RunSpec) expectRows() int {
	if s.fingerprint == nil {
		return 0
	}
	return s.fingerprint.Rows
}

// Parse returns the parser options of the run.
func (s RunSpec) Parse() channelfeed.Options {
	o := s.Feed
	o.Location = s.Day.Location
	o.Fingerprinted = s.fingerprint
	return o
}

// NewSpec is the run of channel ch for day as the config has it: the one
// place `run`, `schedule`, `report` and `demo` get a run's settings from.
// The file is the channel's path template filled in, the out directory
// <out_dir>/<date>/<channel>.
func NewSpec(cfg config.Config, ch config.Channel, day reconcile.BusinessDay) RunSpec {
	refunds, payments := ch.Windows()
	var disputes string
	if cfg.Disputes.On() {
		disputes = cfg.Disputes.Relation
	}
	return RunSpec{
		Disputes:      disputes,
		DisputeWindow: cfg.Disputes.Wait(),
		RefundWindow:  refunds,
		PaymentWindow: payments,
		Fees:          ch.Fees(),
		Channel:       ch.Name,
		Format:        ch.Format,
		File:          ch.FilePath(day.Date),
		Day:           day,
		OutDir:        filepath.Join(cfg.OutDir, day.String(), ch.Name),
		Grace:         ch.CutOff(),
		Feed:          ch.Feed(day),
		PayoutDelay:   ch.PayoutDelay(),
		Account:       ch.Account,
		Terms:         payoutTerms(cfg),
	}
}

// payoutTerms are the payout terms of every channel of the config that
// is not a bank account: a statement night looks for their payouts.
func payoutTerms(cfg config.Config) map[string]reconcile.PayoutTerms {
	out := map[string]reconcile.PayoutTerms{}
	for _, ch := range cfg.Channels {
		if !ch.Statement() {
			out[ch.Name] = ch.Terms()
		}
	}
	return out
}

// Statement reports whether the run is a bank statement's night.
func (s RunSpec) Statement() bool { return slices.Contains(reconcile.StatementFormats, s.Format) }

// expected is p of the run's channel, expected at the bank on the date
// its file says, else PayoutDelay days after the business date.
func (s RunSpec) expected(p reconcile.Payout) reconcile.Payout {
	p.Channel = s.Channel
	if p.ExpectedOn.IsZero() {
		p.ExpectedOn = s.Day.UTCDate().AddDate(0, 0, s.PayoutDelay)
	}
	return p
}
