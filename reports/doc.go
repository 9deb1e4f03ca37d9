// Package reports writes what a run tells people: summary.json, the review
// workbook and the Slack alert.
//
// Everything here treats text from a settlement file as hostile: the
// workbook stores it as string cells that cannot become formulas, and the
// alert escapes it so it cannot ping a channel or forge a link. Money stays
// in integer minor units until it is written out as an exact decimal
// string by reconcile.FormatAmount; no float64 ever holds an amount.
package reports
