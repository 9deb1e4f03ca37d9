// Package config is the job's configuration file: its settings, their
// defaults (every default of the job is set here, once), and the checks
// that refuse a config before a run starts rather than at 03:00.
//
// Secrets are never in the file: it names the environment variables that
// hold them.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"reconcile"
	"reconcile/bankfeed"
	"reconcile/channelfeed"
	"reconcile/inputfile"
)

// Config is the job's configuration file, JSON. Flags override it.
type Config struct {
	// DatabaseURLEnv names the variable with the DSN (default RECONCILE_DATABASE_URL).
	DatabaseURLEnv string `json:"database_url_env"`
	OutDir         string `json:"out_dir"` // default "out"
	// Lease is how long a run holds its channel and date without renewing
	// (default 15m): what a stuck or cut-off holder can cost.
	Lease Duration `json:"lease"`
	// LockPoll is how often a run waiting for another run of its channel
	// and date looks again whether it may go ahead (default 1s).
	LockPoll Duration `json:"lock_poll,omitempty"`
	// StillOpenDays: a finding open longer is listed again in the alert
	// (default 3; -1: never).
	StillOpenDays int `json:"still_open_days"`
	// MemoryDays is how many earlier business dates' files a run looks
	// back on for a key settled before (default 7).
	MemoryDays int `json:"memory_days"`
	// ReviewMaxLines is how many review lines a workbook holds (default
	// 50,000); past it the workbook holds the first ones and says where
	// the CSV export of all of them is.
	ReviewMaxLines int       `json:"review_max_lines"`
	Schedule       Schedule  `json:"schedule"`
	Slack          Slack     `json:"slack"`
	Channels       []Channel `json:"channels"`
	// Metrics serves Prometheus metrics and a health check from `reconcile
	// schedule` (off by default).
	Metrics Metrics `json:"metrics"`
	// Disputes names the merchant's record of disputes, where it keeps
	// one (off by default).
	Disputes *Disputes `json:"disputes,omitempty"`
}

// Schedule says when `reconcile schedule` ticks.
type Schedule struct {
	Spec     string `json:"spec"`      // cron spec, default "0 3 * * *"
	TimeZone string `json:"time_zone"` // IANA name the spec is read in, default UTC
	// LookbackDays: each tick looks this many business dates back for
	// files not yet reconciled (default 7), so a missed night catches up.
	LookbackDays int `json:"lookback_days"`
}

// Slack names where alerts go. With a token and a channel the alert is
// posted with the workbook attached; with only a webhook, the message alone;
// with neither it is printed.
type Slack struct {
	TokenEnv   string `json:"token_env"`   // default SLACK_BOT_TOKEN
	Channel    string `json:"channel"`     // e.g. "#payments-recon"; or:
	ChannelEnv string `json:"channel_env"` // default SLACK_CHANNEL
	WebhookEnv string `json:"webhook_env"` // default SLACK_WEBHOOK_URL
	// Top is how many items needing review the alert lists (default 5).
	Top int `json:"top"`
	// RetryAttempts and RetryBudget bound the retries of one Slack call
	// (defaults 5 and 2m).
	RetryAttempts int      `json:"retry_attempts"`
	RetryBudget   Duration `json:"retry_budget"`
}

// Channel is one payment channel.
type Channel struct {
	Name   string `json:"name"`   // as in orders.channel and refunds.channel
	Format string `json:"format"` // settlement format: wechatpay, alipay, stripe, adyen, csv, mapped
	// Path is the settlement file's path template: {date} is YYYY-MM-DD,
	// {yyyymmdd} is the date without dashes.
	Path string `json:"path"`
	// TimeZone is the business time zone. Default: Asia/Shanghai for the
	// wechatpay and alipay formats (the channels' own day), else UTC.
	TimeZone string `json:"time_zone"`
	// OrderMetadataKey and RefundMetadataKey name the Stripe metadata keys
	// holding our order and refund numbers (defaults order_id and
	// merchant_refund_id).
	OrderMetadataKey  string `json:"order_metadata_key,omitempty"`
	RefundMetadataKey string `json:"refund_metadata_key,omitempty"`
	// Mapping says which column of a "mapped" CSV is which field.
	Mapping *channelfeed.Mapping `json:"mapping,omitempty"`
	// Grace is the cut-off window (default 30m): a record settled this
	// close to the end of day D and missing from D's file is pending, and
	// D+1's run looks for it.
	Grace *Duration `json:"grace,omitempty"`
	// Deadline is how long after the end of day D its file may take to
	// arrive (default 14h: 14:00 on D+1). A file still absent then is
	// alerted, once.
	Deadline Duration `json:"deadline,omitempty"`
	// RowWindow bounds the times of the rows of day D's file: a row dated
	// outside stops the file (defaults: 400 days before D, 2 days after).
	RowWindow *RowWindow `json:"row_window,omitempty"`
	// DuplicateWindow sets how close together a repeated refund or payment
	// under a new number is suspected (defaults 24h and 10m).
	DuplicateWindow *DuplicateWindow `json:"duplicate_window,omitempty"`
	// Fee is the channel's fee contract; without one no fee is checked.
	Fee *FeeContract `json:"fee,omitempty"`
	// FeeTolerance is how many minor units a row's fee may be off the
	// contract's before it is a fee_mismatch (default 0).
	FeeTolerance int64 `json:"fee_tolerance,omitempty"`
	// Fetch, when set, has the job download the file itself into Path.
	Fetch *Fetch `json:"fetch,omitempty"`
	// Account is, for a bank account (formats camt053, mt940, bai2), the
	// IBAN or account number its statements must be of: one, or a list
	// for a file that holds the statements of several.
	Account Accounts `json:"account,omitempty"`
	// Payouts says how the channel's payouts reach the bank.
	Payouts *Payouts `json:"payouts,omitempty"`
}

// RowWindow is how far from its business date a row of a settlement file
// may be dated. Rows are dated before D for good reasons (a refund row
// dated by its request, a payout that carries charges of weeks before, a
// refund of last year's order), after D hardly at all (a clock or a zone a
// little off); a row of year 0, 9999 or 1999 in a 2026 file is a broken
// export, and stops the run naming its line.
type RowWindow struct {
	DaysBefore int `json:"days_before"` // default 400
	DaysAfter  int `json:"days_after"`  // default 2
}

// Defaults of RowWindow.
const (
	defaultDaysBefore = 400
	defaultDaysAfter  = 2
)

// Window is the channel's row window with its defaults.
func (ch Channel) Window() RowWindow {
	w := RowWindow{DaysBefore: defaultDaysBefore, DaysAfter: defaultDaysAfter}
	if ch.RowWindow != nil {
		if ch.RowWindow.DaysBefore > 0 {
			w.DaysBefore = ch.RowWindow.DaysBefore
		}
		if ch.RowWindow.DaysAfter > 0 {
			w.DaysAfter = ch.RowWindow.DaysAfter
		}
	}
	return w
}

// CutOff is the channel's cut-off window (the "grace" setting; "0s" turns
// it off, absent is the default).
func (ch Channel) CutOff() time.Duration {
	if ch.Grace == nil {
		return 30 * time.Minute
	}
	return time.Duration(*ch.Grace)
}

// OverdueAt is when the channel's file of the day ending at dayEnd is
// overdue.
func (ch Channel) OverdueAt(dayEnd time.Time) time.Time {
	d := time.Duration(ch.Deadline)
	if d == 0 {
		d = 14 * time.Hour
	}
	return dayEnd.Add(d)
}

// Feed returns the channel's parser settings for the file of day.
func (ch Channel) Feed(day reconcile.BusinessDay) channelfeed.Options {
	w := ch.Window()
	return channelfeed.Options{OrderKey: ch.OrderMetadataKey, RefundKey: ch.RefundMetadataKey, Mapping: ch.Mapping,
		Earliest: day.Start().AddDate(0, 0, -w.DaysBefore), Latest: day.End().AddDate(0, 0, w.DaysAfter)}
}

// Defaults and bounds of the numeric settings. Every number of the
// config is bounded where it is read (Problems), generously, so that none
// overflows where it is scaled: days and durations added to times, a fee
// tolerance in thousandths of a minor unit.
const (
	defaultStillOpenDays = 3
	maxStillOpenDays     = 3660
	defaultMemoryDays    = 7
	maxMemoryDays        = 366
	defaultReviewLines   = reconcile.DefaultReviewLines
	maxReviewLines       = reconcile.MaxSheetLines
	maxLookbackDays      = 92
	maxLease             = 24 * time.Hour
	maxGrace             = 24 * time.Hour
	maxDeadline          = maxLookbackDays * 24 * time.Hour
	defaultTop           = 5
	// maxTop is the most items an alert lists (reports.RunMessage lists
	// no more).
	maxTop = 30
	// maxRetryAttempts and maxRetryBudget bound a retry policy: Slack's,
	// and each fetch's.
	maxRetryAttempts = 20
	maxRetryBudget   = time.Hour
)

// hours writes a bound of whole hours as the config would ("24h").
func hours(d time.Duration) string { return fmt.Sprintf("%dh", d/time.Hour) }

// problems lists what is wrong with the Slack settings, for Problems.
func (s Slack) problems() []error {
	var errs []error
	if s.Top < 1 || s.Top > maxTop {
		errs = append(errs, fieldErrorf("slack.top", "slack.top %d: want 1 to %d (0 for the default, %d)", s.Top, maxTop, defaultTop))
	}
	if n := s.RetryAttempts; n < 0 || n > maxRetryAttempts {
		errs = append(errs, fieldErrorf("slack.retry_attempts", "slack.retry_attempts %d: want 1 to %d (0 for the default, 5)", n, maxRetryAttempts))
	}
	if b := time.Duration(s.RetryBudget); b > maxRetryBudget {
		errs = append(errs, fieldErrorf("slack.retry_budget", "slack.retry_budget %s: want at most %s (0 for the default, 2m)", b, hours(maxRetryBudget)))
	}
	return errs
}

// Default is what applies without a config file.
func Default() Config {
	c := Config{}
	c.applyDefaults()
	return c
}

func (c *Config) applyDefaults() {
	if c.DatabaseURLEnv == "" {
		c.DatabaseURLEnv = "RECONCILE_DATABASE_URL"
	}
	if c.OutDir == "" {
		c.OutDir = "out"
	}
	if c.Schedule.Spec == "" {
		c.Schedule.Spec = "0 3 * * *"
	}
	if c.Schedule.TimeZone == "" {
		c.Schedule.TimeZone = "UTC"
	}
	if c.Slack.TokenEnv == "" {
		c.Slack.TokenEnv = "SLACK_BOT_TOKEN"
	}
	if c.Slack.ChannelEnv == "" {
		c.Slack.ChannelEnv = "SLACK_CHANNEL"
	}
	if c.Slack.WebhookEnv == "" {
		c.Slack.WebhookEnv = "SLACK_WEBHOOK_URL"
	}
	if c.Slack.Top == 0 {
		c.Slack.Top = defaultTop
	}
	if c.Lease == 0 {
		c.Lease = Duration(15 * time.Minute)
	}
	if c.LockPoll == 0 {
		c.LockPoll = Duration(time.Second)
	}
	if c.StillOpenDays == 0 {
		c.StillOpenDays = defaultStillOpenDays
	}
	if c.MemoryDays == 0 {
		c.MemoryDays = defaultMemoryDays
	}
	if c.ReviewMaxLines == 0 {
		c.ReviewMaxLines = defaultReviewLines
	}
	if c.Schedule.LookbackDays == 0 {
		c.Schedule.LookbackDays = 7
	}
	for i := range c.Channels {
		if c.Channels[i].TimeZone == "" {
			c.Channels[i].TimeZone = DefaultZone(c.Channels[i].Format)
		}
	}
}

// DefaultZone is the business time zone of a format's channel when the
// config names none: WeChat Pay and Alipay cut their day at midnight in
// China; the others have no zone of their own.
func DefaultZone(format string) string {
	switch format {
	case "wechatpay", "alipay":
		return "Asia/Shanghai"
	}
	return "UTC"
}

// maxConfigBytes bounds a config file: one with a hundred channels and
// their mappings is a few tens of kilobytes.
const maxConfigBytes = 1 << 20

// Read reads a config file as every file the job did not write is read:
// a regular file only (a named pipe would block), of bounded size.
func Read(path string) ([]byte, error) {
	return inputfile.ReadFile(path, "config", maxConfigBytes)
}

// Load reads and checks a config file; an empty path gives the defaults.
func Load(path string) (Config, error) {
	if path == "" {
		return Default(), nil
	}
	b, err := Read(path)
	if err != nil {
		return Config{}, err
	}
	var c Config
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	c.applyDefaults()
	if err := c.validate(); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

func (c *Config) validate() error {
	return errors.Join(c.Problems()...)
}

// Problems lists everything wrong with the config, not only the first
// thing: Load refuses the config on any of them, check-config prints each
// on a line of its own. Each is a *FieldError naming its setting, so
// check-config can say on which line of the file it is.
func (c *Config) Problems() []error {
	var errs []error
	if _, err := time.LoadLocation(c.Schedule.TimeZone); err != nil {
		errs = append(errs, fieldErrorf("schedule.time_zone", "schedule.time_zone %s: %s", reconcile.Quote(c.Schedule.TimeZone), zoneTrouble(err)))
	}
	if _, err := cron.ParseStandard(c.Schedule.Spec); err != nil {
		errs = append(errs, fieldErrorf("schedule.spec", "schedule.spec %s: %w", reconcile.Quote(c.Schedule.Spec), err))
	}
	if c.Schedule.LookbackDays < 1 || c.Schedule.LookbackDays > maxLookbackDays {
		errs = append(errs, fieldErrorf("schedule.lookback_days", "schedule.lookback_days %d: want 1 to %d", c.Schedule.LookbackDays, maxLookbackDays))
	}
	if l := time.Duration(c.Lease); l < 30*time.Second || l > maxLease {
		errs = append(errs, fieldErrorf("lease", "lease %s: want 30s to %s", l, hours(maxLease)))
	}
	if p := time.Duration(c.LockPoll); p < 10*time.Millisecond || p > time.Minute {
		errs = append(errs, fieldErrorf("lock_poll", "lock_poll %s: want 10ms to 1m", p))
	}
	if d := c.StillOpenDays; d != -1 && (d < 1 || d > maxStillOpenDays) {
		errs = append(errs, fieldErrorf("still_open_days", "still_open_days %d: want 1 to %d, or -1 for never (0 for the default, %d)",
			d, maxStillOpenDays, defaultStillOpenDays))
	}
	if d := c.MemoryDays; d < 1 || d > maxMemoryDays {
		errs = append(errs, fieldErrorf("memory_days", "memory_days %d: want 1 to %d (0 for the default, %d)", d, maxMemoryDays, defaultMemoryDays))
	}
	if n := c.ReviewMaxLines; n < 1 || n > maxReviewLines {
		errs = append(errs, fieldErrorf("review_max_lines", "review_max_lines %d: want 1 to %d, the rows a sheet holds below its header (0 for the default, %d)",
			n, maxReviewLines, defaultReviewLines))
	}
	errs = append(errs, c.Slack.problems()...)
	errs = append(errs, c.Metrics.problems()...)
	errs = append(errs, c.Disputes.problems()...)
	seen := map[string]int{}
	for i, ch := range c.Channels {
		at, where := ch.Where(i)
		if err := reconcile.CheckChannelName(ch.Name); err != nil {
			errs = append(errs, fieldErrorf(at+".name", "%s: %s", where, err))
		} else if first, ok := seen[ch.Name]; ok {
			errs = append(errs, fieldErrorf(at+".name", "%s: channel %s listed twice (also channels[%d])", where, reconcile.Quote(ch.Name), first))
		} else {
			seen[ch.Name] = i
		}
		errs = append(errs, ch.problems(at, where)...)
	}
	return append(errs, c.sharedPaths()...)
}

// sharedPaths lists each channel whose path template names the file
// another channel fetches into: that channel would reconcile the other's
// file, or the fetch overwrite its own. Two templates are one path when
// they name the same file for a date (sameFileDate), once cleaned.
func (c *Config) sharedPaths() []error {
	var errs []error
	first := map[string]int{} // the cleaned path of a date → its first channel
	for i, ch := range c.Channels {
		if TemplateTrouble(ch.Path) != "" {
			continue
		}
		p := filepath.Clean(ch.FilePath(sameFileDate))
		j, ok := first[p]
		if !ok {
			first[p] = i
			continue
		}
		other := c.Channels[j]
		if ch.Fetch == nil && other.Fetch == nil {
			continue
		}
		at, where := ch.Where(i)
		_, otherName := other.Where(j)
		how := "which fetches its file into it"
		if other.Fetch == nil {
			how = "which reads the file this channel fetches"
		}
		errs = append(errs, fieldErrorf(at+".path", "%s: path %s is also the path of %s, %s: give each channel a path of its own",
			where, reconcile.Quote(ch.Path), otherName, how))
	}
	return errs
}

// sameFileDate is the date two path templates are compared at: {date} and
// {yyyymmdd} name different files for every date or for none.
var sameFileDate = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

// problems lists what is wrong with one channel's settings; at is its
// JSON path, where its name for a reader.
func (ch Channel) problems(at, where string) []error {
	var errs []error
	if _, err := time.LoadLocation(ch.TimeZone); err != nil {
		errs = append(errs, fieldErrorf(at+".time_zone", "%s: time_zone %s: %s", where, reconcile.Quote(ch.TimeZone), zoneTrouble(err)))
	}
	if ch.Format != "" && !ch.Statement() {
		if _, err := channelfeed.Lookup(ch.Format); err != nil {
			errs = append(errs, fieldErrorf(at+".format", "%s: %w (bank statements: %s)", where, err, strings.Join(bankfeed.Formats(), ", ")))
		}
	}
	errs = append(errs, ch.payoutProblems(at, where)...)
	// The cut-off is a window before the end of the day, and a file is
	// alerted overdue at the latest when the longest lookback ends.
	if g := ch.CutOff(); g >= maxGrace {
		errs = append(errs, fieldErrorf(at+".grace", "%s: grace %s: want less than %s (it is a window before the end of the day)", where, g, hours(maxGrace)))
	}
	if d := time.Duration(ch.Deadline); d > maxDeadline {
		errs = append(errs, fieldErrorf(at+".deadline", "%s: deadline %s: want at most %s, %d days, the longest schedule.lookback_days", where, d, hours(maxDeadline), maxLookbackDays))
	}
	if w := ch.RowWindow; w != nil {
		if w.DaysBefore < 0 || w.DaysBefore > 3660 {
			errs = append(errs, fieldErrorf(at+".row_window.days_before", "%s: row_window.days_before %d: want 1 to 3660 (0 for the default, %d)", where, w.DaysBefore, defaultDaysBefore))
		}
		if w.DaysAfter < 0 || w.DaysAfter > 366 {
			errs = append(errs, fieldErrorf(at+".row_window.days_after", "%s: row_window.days_after %d: want 1 to 366 (0 for the default, %d)", where, w.DaysAfter, defaultDaysAfter))
		}
	}
	errs = append(errs, ch.feeProblems(at, where)...)
	errs = append(errs, ch.fetchProblems(at, where)...)
	switch {
	case ch.Format == "mapped" && ch.Mapping == nil:
		errs = append(errs, fieldErrorf(at+".format", "%s: format mapped needs a \"mapping\"", where))
	case ch.Format == "mapped":
		if err := ch.Mapping.Validate(); err != nil {
			errs = append(errs, fieldErrorf(at+".mapping", "%s: %w", where, err))
		}
	case ch.Mapping != nil:
		errs = append(errs, fieldErrorf(at+".mapping", "%s: a \"mapping\" is only read by format mapped, not %s", where, reconcile.Quote(ch.Format)))
	}
	return errs
}

// Where names the i-th channel in messages: its JSON path, and the path
// with its name for a reader (channels[2] "adyen").
func (ch Channel) Where(i int) (path, name string) {
	path = fmt.Sprintf("channels[%d]", i)
	if ch.Name == "" {
		return path, path
	}
	return path, fmt.Sprintf("%s %s", path, reconcile.Quote(ch.Name))
}

// Lookup returns the named channel's settings; a channel the config does
// not name (a run given --channel, --format and --file) has only its name,
// and the defaults.
func (c *Config) Lookup(name string) (ch Channel, configured bool) {
	for _, ch := range c.Channels {
		if ch.Name == name {
			return ch, true
		}
	}
	return Channel{Name: name}, false
}

// Zone names the channel's business time zone: its time_zone, else its
// format's (DefaultZone).
func (ch Channel) Zone() string {
	if ch.TimeZone == "" {
		return DefaultZone(ch.Format)
	}
	return ch.TimeZone
}

// FilePath fills the channel's path template for a business date.
func (ch Channel) FilePath(date time.Time) string {
	r := strings.NewReplacer("{date}", date.Format(time.DateOnly), "{yyyymmdd}", date.Format("20060102"))
	return r.Replace(ch.Path)
}
