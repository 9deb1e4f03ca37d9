package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"reconcile"
	"reconcile/channelfeed"
)

// ScheduleProblems lists what Load lets through, because `run` given
// --file, --format or --channel does not need it, but `schedule` does: a
// format, a dated path template, settings only another format reads, a
// deadline past the lookback window. Each is a *FieldError.
func (c *Config) ScheduleProblems() []error {
	var errs []error
	if len(c.Channels) == 0 {
		errs = append(errs, fieldErrorf("channels", "channels: none configured: schedule refuses such a config, and run needs --channel"))
	}
	lookback := time.Duration(c.Schedule.LookbackDays) * 24 * time.Hour
	for i, ch := range c.Channels {
		at, where := ch.Where(i)
		if ch.Format == "" {
			errs = append(errs, fieldErrorf(at+".format", "%s: format is empty: want one of %s", where, strings.Join(channelfeed.Formats(), ", ")))
		}
		if msg := TemplateTrouble(ch.Path); msg != "" {
			errs = append(errs, fieldErrorf(at+".path", "%s: %s", where, msg))
		}
		if ch.Format != "" && ch.Format != "stripe" {
			var keys []string
			if ch.OrderMetadataKey != "" {
				keys = append(keys, "order_metadata_key")
			}
			if ch.RefundMetadataKey != "" {
				keys = append(keys, "refund_metadata_key")
			}
			if len(keys) > 0 {
				errs = append(errs, fieldErrorf(at+"."+keys[0], "%s: %s: only read by format stripe, not %s", where, strings.Join(keys, " and "), reconcile.Quote(ch.Format)))
			}
		}
		if d := ch.OverdueAt(time.Time{}).Sub(time.Time{}); lookback > 0 && d >= lookback {
			errs = append(errs, fieldErrorf(at+".deadline", "%s: deadline %s: want less than the lookback window (schedule.lookback_days %d), or a missing file leaves the window before it is alerted",
				where, d, c.Schedule.LookbackDays))
		}
	}
	return errs
}

// placeholder is a {word} in a path template.
var placeholder = regexp.MustCompile(`\{[^{}]*\}`)

// TemplateTrouble says what is wrong with a path template, or "".
func TemplateTrouble(path string) string {
	if path == "" {
		return "path is empty: schedule, and run without --file, cannot find the channel's file"
	}
	var unknown []string
	dated := false
	for _, p := range placeholder.FindAllString(path, -1) {
		switch p {
		case "{date}", "{yyyymmdd}":
			dated = true
		default:
			unknown = append(unknown, p)
		}
	}
	switch {
	case len(unknown) > 0:
		return fmt.Sprintf("path %q: unknown placeholder %s (known: {date} for 2026-11-28, {yyyymmdd} for 20261128)", path, strings.Join(unknown, ", "))
	case !dated:
		return fmt.Sprintf("path %q has no {date} or {yyyymmdd}: every business date would read the same file", path)
	}
	return ""
}
