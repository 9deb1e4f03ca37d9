package channelfeed

import (
	"strings"
	"time"

	"reconcile"
)

// maxPayouts bounds the payouts one file may tell of: a day's file of a
// channel holds a few, a month's backfill a few thousand; a file naming a
// payout on every row is a misread column, refused before it fills memory.
const maxPayouts = 1 << 20

// payoutBook sums a file's rows by the payout that paid them out, and
// holds each payout to its own row where the file has one. The payouts
// are handed on (Options.Payouts) only once the whole file is read.
type payoutBook struct {
	byID  map[string]int
	list  []reconcile.Payout
	field string // the header's name of the column a payout's id is read from
}

// add counts a row of net (signed minor units of currency) in payout id,
// expected on the date on where the file says.
func (b *payoutBook) add(o Options, id, currency string, net int64, on time.Time, line int) error {
	p, err := b.get(o, id, currency, line)
	if err != nil {
		return err
	}
	sum, ok := addChecked(p.Amount, net)
	if !ok {
		return o.errorf(line, b.field, "payout %s adds up past what an amount can hold", reconcile.Quote(id))
	}
	p.Amount = sum
	p.Rows++
	if p.ExpectedOn.IsZero() {
		p.ExpectedOn = on
	} else if !on.IsZero() && !on.Equal(p.ExpectedOn) {
		return o.errorf(line, b.field, "payout %s is expected on %s here and on %s on an earlier row",
			reconcile.Quote(id), on.Format(time.DateOnly), p.ExpectedOn.Format(time.DateOnly))
	}
	return nil
}

// state sets what the payout's own row says it pays out, and what the
// bank will show of it.
func (b *payoutBook) state(o Options, id, currency string, amount int64, reference string, line int) error {
	p, err := b.get(o, id, currency, line)
	if err != nil {
		return err
	}
	if p.HasStated {
		return o.errorf(line, b.field, "a second row paying out %s", reconcile.Quote(id))
	}
	p.Stated, p.HasStated, p.Reference = amount, true, strings.Clone(reference)
	return nil
}

// paidOut records a payout a file states whole (Adyen's MerchantPayout,
// whose batch the file's own control total has checked): its amount is
// what its row says.
func (b *payoutBook) paidOut(o Options, id, currency string, amount int64, reference string, line int) error {
	if err := b.state(o, id, currency, amount, reference, line); err != nil {
		return err
	}
	b.list[b.byID[id]].Amount = amount
	return nil
}

func (b *payoutBook) get(o Options, id, currency string, line int) (*reconcile.Payout, error) {
	if i, ok := b.byID[id]; ok {
		p := &b.list[i]
		if p.Currency != currency {
			return nil, o.errorf(line, b.field, "payout %s in %s here and in %s on line %d: a payout is in one currency",
				reconcile.Quote(id), currency, p.Currency, p.Line)
		}
		return p, nil
	}
	if len(b.list) == maxPayouts {
		return nil, o.errorf(line, b.field, "more than %d payouts in one file", maxPayouts)
	}
	if b.byID == nil {
		b.byID = map[string]int{}
	}
	// The row's text may be lent (textSlabs): the payout keeps its own.
	id = strings.Clone(id)
	b.byID[id] = len(b.list)
	b.list = append(b.list, reconcile.Payout{ID: id, Currency: strings.Clone(currency), Line: line})
	return &b.list[len(b.list)-1], nil
}

// close checks every payout's rows against its own row, and hands the
// payouts to o.Payouts in the order the file first names them.
func (b *payoutBook) close(o Options) error {
	for _, p := range b.list {
		if p.HasStated && p.Stated != p.Amount {
			return o.errorf(p.Line, b.field, "%w: payout %s pays out %s, its rows net to %s", reconcile.ErrControlTotal,
				reconcile.Quote(p.ID), reconcile.FormatAmount(p.Stated, p.Currency), reconcile.FormatAmount(p.Amount, p.Currency))
		}
	}
	if o.Payouts == nil {
		return nil
	}
	for _, p := range b.list {
		if err := o.Payouts(p); err != nil {
			return err
		}
	}
	return nil
}
