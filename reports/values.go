package reports

import (
	"path/filepath"
	"sort"
	"strings"
	"time"

	"reconcile"
)

// How the values of a run read wherever a report shows them: the workbook,
// its CSV export and the alert take them from here, so that one of them
// cannot name a file, a time or a currency differently from the others.

// dayLocation is the time zone of a business date, UTC for a run that
// failed before it had one.
func dayLocation(d reconcile.BusinessDay) *time.Location {
	if d.Location != nil {
		return d.Location
	}
	return time.UTC
}

// localTime is when a finding happened, on the clock of the business date.
func localTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format(time.DateTime)
}

// findingTime is the Time of a finding's line: a settlement row's time
// in the business zone; a payout finding's date (an expected date, a
// booking date), which is a calendar date, not an instant.
func findingTime(f reconcile.Finding, loc *time.Location) string {
	if f.Kind == reconcile.KindPayout && !f.OccurredAt.IsZero() {
		return f.OccurredAt.Format(time.DateOnly)
	}
	return localTime(f.OccurredAt, loc)
}

// zoned is a time of the run itself (its start and end, a file's
// deadline) with its offset written out, so it reads the same to someone
// in another zone.
func zoned(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format("2006-01-02 15:04:05 -07:00")
}

// baseName is only the name of a file the run read: reports travel to
// Slack, where a server's directory layout is of no use and no business.
func baseName(path string) string {
	if path == "" {
		return ""
	}
	return filepath.Base(path)
}

// findingCurrency is the currency a finding is counted in: the channel's,
// or ours when the channel has none, as Result.AtRisk counts it.
func findingCurrency(f reconcile.Finding) string {
	if f.Currency != "" {
		return f.Currency
	}
	return f.LocalCurrency
}

// reviewHint adds the file's own word for an unrecognised row, the one
// thing a reviewer needs to find it again in the file.
func reviewHint(f reconcile.Finding) string {
	if f.Category == reconcile.Unrecognized && f.RawKind != "" && !strings.Contains(f.Hint, f.RawKind) {
		if f.Hint == "" {
			return "row kind: " + f.RawKind
		}
		return f.Hint + " (row kind: " + f.RawKind + ")"
	}
	return f.Hint
}

// sortedCurrencies returns the keys of m in order, so every rendering of
// money lists currencies the same way.
func sortedCurrencies[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// digits is how many minor-unit digits a currency's amounts have: 2 for
// an unknown currency, as FormatAmount writes it, so the number format of
// a cell and the ranking of the alert agree with the amount's text.
func digits(currency string) int {
	if d, ok := reconcile.CurrencyDigits(currency); ok {
		return d
	}
	return 2
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
