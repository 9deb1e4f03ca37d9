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
	list  []bookedPayout
	field string // the header's name of the column a payout's id is read from
	// dateField, amountField and feeField name, in a format that has
	// them, the columns a payout's date, its own row's amount and a row's
	// fee are read from, for the errors about them; "" names field.
	dateField, amountField, feeField string
}

// bookedPayout is a payout being summed, and the line of its own row (0
// until the file gives one).
type bookedPayout struct {
	reconcile.Payout
	ownLine int
}

// column is name, or the payout id's column when the format has none.
func (b *payoutBook) column(name string) string {
	if name == "" {
		return b.field
	}
	return name
}

// add counts a row of net (signed minor units of currency) in payout id,
// expected on the date on where the file says.
func (b *payoutBook) add(o Options, id, currency string, net int64, on time.Time, line int) error {
	p, err := b.get(o, id, currency, line)
	if err != nil {
		return err
	}
	sum, ok := reconcile.AddChecked(p.Amount, net)
	if !ok {
		return o.errorf(line, b.field, "payout %s adds up past what an amount can hold", reconcile.Quote(id))
	}
	p.Amount = sum
	p.Rows++
	return b.expect(o, &p.Payout, on, line)
}

// expect sets the date payout p is expected on, on, where a row says
// one; every row that says one must say the same.
func (b *payoutBook) expect(o Options, p *reconcile.Payout, on time.Time, line int) error {
	if p.ExpectedOn.IsZero() {
		p.ExpectedOn = on
	} else if !on.IsZero() && !on.Equal(p.ExpectedOn) {
		return o.errorf(line, b.column(b.dateField), "payout %s is expected on %s here and on %s on an earlier row",
			reconcile.Quote(p.ID), on.Format(time.DateOnly), p.ExpectedOn.Format(time.DateOnly))
	}
	return nil
}

// state sets what the payout's own row says it pays out, and what the
// bank will show of it. A payout no other row counts in (Adyen's
// MerchantPayout, whose batch the file's control total has checked)
// pays out that amount (close).
func (b *payoutBook) state(o Options, id, currency string, amount int64, reference string, line int) error {
	p, err := b.get(o, id, currency, line)
	if err != nil {
		return err
	}
	if p.HasStated {
		return o.errorf(line, b.field, "a second row paying out %s (the first is line %d)", reconcile.Quote(id), p.ownLine)
	}
	p.Stated, p.HasStated, p.Reference = amount, true, strings.Clone(reference)
	p.ownLine = line
	return nil
}

// take reads t, a row of a canonical or mapped CSV naming payout id, into
// its payout: a payout's own row (own) states what it pays out, stated,
// negative when the channel debits the account; any other row counts
// its net in it. A row whose status is not success counts in none: a
// failed payment moved no money, a failed payout paid out none.
func (b *payoutBook) take(o Options, t *reconcile.Transaction, id string, own bool, stated int64, on time.Time) error {
	switch {
	case own && id == "":
		return o.errorf(t.Line, b.field, "a payout row without its payout id")
	case own && t.FeeMilli != 0:
		return o.errorf(t.Line, b.column(b.feeField), "a fee on a payout row: a payout's amount is what reaches the bank, its fees are in its rows' net")
	case id == "" || t.Status != reconcile.StatusSuccess:
		return nil
	case own:
		if err := b.state(o, id, t.Currency, stated, "", t.Line); err != nil {
			return err
		}
		return b.expect(o, &b.list[b.byID[id]].Payout, on, t.Line)
	}
	net, err := b.net(o, t, id)
	if err != nil {
		return err
	}
	return b.add(o, id, t.Currency, net, on, t.Line)
}

// net is what t brings to the channel's balance, and so to its payout
// id, in minor units: its amount in the direction of its kind, less its
// fee.
func (b *payoutBook) net(o Options, t *reconcile.Transaction, id string) (int64, error) {
	var amount int64
	switch t.Kind {
	case reconcile.KindPayment, reconcile.KindChargebackReversal, reconcile.KindRefundReversal:
		amount = t.Amount
	case reconcile.KindRefund, reconcile.KindChargeback, reconcile.KindSecondChargeback:
		amount = -t.Amount
	default:
		return 0, o.errorf(t.Line, b.field, "a row of kind %s (%s) in payout %s: which way its money went is not known, so neither is the payout's amount",
			t.Kind, reconcile.Quote(t.RawKind), reconcile.Quote(id))
	}
	// FeeMilli is never math.MinInt64: a fee is read as an amount is.
	milli, ok := toMilli(amount)
	net, ok2 := reconcile.AddChecked(milli, -t.FeeMilli)
	if !ok || !ok2 {
		return 0, o.errorf(t.Line, b.field, "payout %s: the row's net is past what an amount can hold", reconcile.Quote(id))
	}
	if net%1000 != 0 {
		return 0, o.errorf(t.Line, b.column(b.feeField), "a fee in fractions of a minor unit leaves the row's net, and so payout %s's amount, unknown",
			reconcile.Quote(id))
	}
	return net / 1000, nil
}

func (b *payoutBook) get(o Options, id, currency string, line int) (*bookedPayout, error) {
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
	b.list = append(b.list, bookedPayout{Payout: reconcile.Payout{ID: id, Currency: strings.Clone(currency), Line: line}})
	return &b.list[len(b.list)-1], nil
}

// close checks every payout's rows against its own row, and hands the
// payouts to o.Payouts in the order the file first names them. A payout
// whose own row is all the file has of it pays out what that row says.
func (b *payoutBook) close(o Options) error {
	for i := range b.list {
		p := &b.list[i]
		if p.HasStated && p.Rows == 0 {
			p.Amount = p.Stated
		}
		if p.HasStated && p.Stated != p.Amount {
			return o.errorf(p.ownLine, b.column(b.amountField), "%w: payout %s pays out %s, its rows net to %s", reconcile.ErrControlTotal,
				reconcile.Quote(p.ID), reconcile.FormatAmount(p.Stated, p.Currency), reconcile.FormatAmount(p.Amount, p.Currency))
		}
	}
	if o.Payouts == nil {
		return nil
	}
	for _, p := range b.list {
		if err := o.Payouts(p.Payout); err != nil {
			return err
		}
	}
	return nil
}
