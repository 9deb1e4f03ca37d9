// Package matcher classifies one channel's settlement rows of one business
// date against the local records, by the rules of the product spec. It is
// pure: no I/O, no clock, and the same input always gives the same output.
//
// Rows are indexed by key in a hash map as they arrive; local records are
// then streamed past the index one at a time, so memory grows with the
// settlement file, not with the local tables.
package matcher

import (
	"fmt"
	"sort"
	"strings"

	"reconcile"
)

type groupKey struct {
	kind reconcile.Kind
	key  string
}

// group is every row of the file that shares one key, and the local record
// with that key once it has been seen.
type group struct {
	rows  []reconcile.Transaction
	local *reconcile.LocalRecord
}

// Matcher accumulates one run's two sides. Use it from one goroutine.
type Matcher struct {
	day       reconcile.BusinessDay
	groups    map[groupKey]*group
	others    []reconcile.Transaction
	missing   []reconcile.Finding
	rows      int
	batchRows int
	localRows int
}

// New returns a matcher for the business day.
func New(day reconcile.BusinessDay) *Matcher {
	return &Matcher{day: day, groups: map[groupKey]*group{}}
}

// AddRow indexes one settlement row. Rows of a kind the parser did not
// recognise are kept aside and reported, never dropped.
func (m *Matcher) AddRow(tx reconcile.Transaction) {
	m.rows++
	if tx.Kind == reconcile.KindBatch {
		m.batchRows++ // fees and payouts of the batch: counted, not matched
		return
	}
	if tx.Kind != reconcile.KindPayment && tx.Kind != reconcile.KindRefund {
		m.others = append(m.others, tx)
		return
	}
	k := groupKey{tx.Kind, tx.Key()}
	g := m.groups[k]
	if g == nil {
		g = &group{}
		m.groups[k] = g
	}
	g.rows = append(g.rows, tx)
}

// Keys returns the order numbers and refund numbers of the rows seen so
// far, sorted: the local records to look up whatever their date.
func (m *Matcher) Keys() (orders, refunds []string) {
	for k := range m.groups {
		if k.kind == reconcile.KindRefund {
			refunds = append(refunds, k.key)
		} else {
			orders = append(orders, k.key)
		}
	}
	sort.Strings(orders)
	sort.Strings(refunds)
	return orders, refunds
}

// AddLocal takes one local record. A record whose key has rows is kept for
// comparison; a settled record of the day without rows is missing from the
// channel's file. Other records are not this run's business.
func (m *Matcher) AddLocal(rec reconcile.LocalRecord) {
	m.localRows++
	if g := m.groups[groupKey{rec.Kind, rec.Key()}]; g != nil {
		if g.local == nil {
			r := rec
			g.local = &r
		}
		return
	}
	if rec.Settled() && !rec.SettledAt.IsZero() && m.day.Contains(rec.SettledAt) {
		m.missing = append(m.missing, missingChannel(rec))
	}
}

// Result is what the matcher found.
type Result struct {
	ChannelRows int
	BatchRows   int // of ChannelRows, bookings of the batch itself: not matched
	LocalRows   int
	Counts      map[reconcile.Category]int // every category, zeros included
	Findings    []reconcile.Finding        // all but matched, in report order
}

// Result classifies everything added so far.
func (m *Matcher) Result() Result {
	res := Result{
		ChannelRows: m.rows,
		BatchRows:   m.batchRows,
		LocalRows:   m.localRows,
		Counts:      map[reconcile.Category]int{},
	}
	for _, c := range reconcile.Categories {
		res.Counts[c] = 0
	}
	add := func(f reconcile.Finding) {
		res.Counts[f.Category]++
		if f.Category != reconcile.Matched {
			res.Findings = append(res.Findings, f)
		}
	}
	for _, g := range m.groups {
		classify(g, add)
	}
	for _, f := range m.missing {
		add(f)
	}
	for _, tx := range m.others {
		add(unrecognized(tx))
	}
	reconcile.SortFindings(res.Findings)
	return res
}

// classify applies rules 2 to 4: the earliest row of a group is the
// original and is compared with the local record; every later row is a
// duplicate.
func classify(g *group, add func(reconcile.Finding)) {
	sort.SliceStable(g.rows, func(i, j int) bool {
		a, b := g.rows[i], g.rows[j]
		if !a.OccurredAt.Equal(b.OccurredAt) {
			return a.OccurredAt.Before(b.OccurredAt)
		}
		return a.ChannelTxnID < b.ChannelTxnID
	})
	orig := g.rows[0]
	add(compare(orig, g.local))
	if len(g.rows) == 1 {
		return
	}
	reasons := ambiguities(g)
	for _, dup := range g.rows[1:] {
		f := fromRow(dup, g.local)
		f.Category = reconcile.DuplicatePayment
		noun := "payment for order " + dup.OrderNo
		if dup.Kind == reconcile.KindRefund {
			f.Category = reconcile.DuplicateRefund
			noun = "refund " + dup.RefundNo
		}
		f.OriginalTxnID = orig.ChannelTxnID
		f.AutoReverse = len(reasons) == 0
		if f.AutoReverse {
			f.Hint = fmt.Sprintf("The channel settled %s %d times with different channel ids for the same amount; this copy (%s) was reversed automatically.",
				noun, len(g.rows), dup.ChannelTxnID)
		} else {
			f.Hint = fmt.Sprintf("The channel settled %s %d times. Not reversed automatically: %s.",
				noun, len(g.rows), strings.Join(reasons, "; "))
		}
		add(f)
	}
}

// ambiguities lists why a group's duplicates may not be reversed without a
// person: rule 4 of the spec, plus rows the channel did not complete (no
// money moved yet, so there is nothing certain to reverse).
func ambiguities(g *group) []string {
	var why []string
	orig := g.rows[0]
	ids := map[string]int{}
	sameAmount, allSuccess := true, true
	for _, r := range g.rows {
		ids[r.ChannelTxnID]++
		if r.Amount != orig.Amount || r.Currency != orig.Currency {
			sameAmount = false
		}
		if r.Status != reconcile.StatusSuccess {
			allSuccess = false
		}
	}
	if !sameAmount {
		why = append(why, "the rows have different amounts")
	}
	var repeated []string
	for id, n := range ids {
		if n > 1 || id == "" {
			repeated = append(repeated, fmt.Sprintf("%q", id))
		}
	}
	if len(repeated) > 0 {
		sort.Strings(repeated)
		why = append(why, "channel id "+strings.Join(repeated, ", ")+" appears more than once (the same movement reported twice?)")
	}
	if !allSuccess {
		why = append(why, "not every row is a completed movement")
	}
	loc := g.local
	switch {
	case loc == nil:
		why = append(why, "we have no local record")
	case !loc.Settled():
		why = append(why, fmt.Sprintf("our record is %s, not settled", loc.Status))
	case loc.Amount != orig.Amount || loc.Currency != orig.Currency:
		why = append(why, fmt.Sprintf("our record says %s, the rows %s",
			money(loc.Amount, loc.Currency), money(orig.Amount, orig.Currency)))
	}
	if loc != nil && (loc.IdemStatus == reconcile.IdemInProgress || loc.IdemStatus == reconcile.IdemFailed) {
		why = append(why, "the idempotency record is "+loc.IdemStatus+" (a request still in flight or failed)")
	}
	return why
}

// compare applies rule 3 to a group's original row.
func compare(tx reconcile.Transaction, loc *reconcile.LocalRecord) reconcile.Finding {
	f := fromRow(tx, loc)
	what := "payment for order " + tx.OrderNo
	if tx.Kind == reconcile.KindRefund {
		what = "refund " + tx.RefundNo
	}
	switch {
	case loc == nil:
		f.Category = reconcile.MissingLocal
		f.Hint = fmt.Sprintf("The channel settled %s (%s) but we have no record of it: money moved that we never recorded.",
			what, money(tx.Amount, tx.Currency))
	case loc.Amount != tx.Amount || loc.Currency != tx.Currency:
		f.Category = reconcile.AmountMismatch
		f.Hint = fmt.Sprintf("The channel settled %s for %s; we recorded %s.",
			what, money(tx.Amount, tx.Currency), money(loc.Amount, loc.Currency))
	case loc.Outcome() != tx.Status:
		f.Category = reconcile.StatusMismatch
		f.Hint = fmt.Sprintf("The channel says the %s is %s; our record is %s.", what, tx.Status, loc.Status)
		switch {
		case loc.IdemStatus == reconcile.IdemInProgress:
			f.Hint += " Its idempotency record is still IN_PROGRESS: the service stopped between calling the channel and recording the result. Complete the record from the channel's data; do not retry the request."
		case tx.Status == reconcile.StatusSuccess:
			f.Hint += " Probably a lost callback: the channel's result never reached us."
		}
	default:
		f.Category = reconcile.Matched
	}
	return f
}

func fromRow(tx reconcile.Transaction, loc *reconcile.LocalRecord) reconcile.Finding {
	f := reconcile.Finding{
		Kind:          tx.Kind,
		OrderNo:       tx.OrderNo,
		RefundNo:      tx.RefundNo,
		ChannelTxnID:  tx.ChannelTxnID,
		HasChannel:    true,
		ChannelAmount: tx.Amount,
		Currency:      tx.Currency,
		ChannelStatus: tx.Status,
		OccurredAt:    tx.OccurredAt,
		Line:          tx.Line,
		RawKind:       tx.RawKind,
	}
	if loc != nil {
		f.HasLocal = true
		f.LocalAmount = loc.Amount
		f.LocalCurrency = loc.Currency
		f.LocalStatus = loc.Status
		f.LocalTxnID = loc.ChannelTxnID
		f.IdemStatus = loc.IdemStatus
	}
	return f
}

func missingChannel(rec reconcile.LocalRecord) reconcile.Finding {
	what := "order " + rec.OrderNo + " as " + rec.Status
	if rec.Kind == reconcile.KindRefund {
		what = "refund " + rec.RefundNo + " as " + rec.Status
	}
	return reconcile.Finding{
		Category:      reconcile.MissingChannel,
		Kind:          rec.Kind,
		OrderNo:       rec.OrderNo,
		RefundNo:      rec.RefundNo,
		LocalTxnID:    rec.ChannelTxnID,
		HasLocal:      true,
		LocalAmount:   rec.Amount,
		LocalCurrency: rec.Currency,
		LocalStatus:   rec.Status,
		IdemStatus:    rec.IdemStatus,
		OccurredAt:    rec.SettledAt,
		Hint: fmt.Sprintf("We recorded %s (%s) on this date, but the channel's file has no row for it.",
			what, money(rec.Amount, rec.Currency)),
	}
}

func unrecognized(tx reconcile.Transaction) reconcile.Finding {
	f := fromRow(tx, nil)
	f.Category = reconcile.Unrecognized
	f.Hint = fmt.Sprintf("Line %d is a row of kind %q that the job does not know how to match; check it by hand.", tx.Line, tx.RawKind)
	return f
}

func money(minor int64, currency string) string {
	return reconcile.FormatAmount(minor, currency) + " " + currency
}
