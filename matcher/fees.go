package matcher

import (
	"fmt"
	"sort"

	"reconcile"
)

// Rule 11: where the channel's contract is known (Options.Fees), each
// settled row's fee is set against the contract's fee for its kind,
// amount and currency. Every row is looked at, on its index values.

// feeRules caches a contract's rule per kind and currency: a file has a
// handful of currencies.
type feeRules struct {
	contract *reconcile.FeeContract
	rules    map[[4]byte]*feeRule // kind code, currency
	last     *feeRule
	lastKey  [4]byte
}

type feeRule struct {
	reconcile.FeeRule
	ok  bool
	err error
}

func (c *feeRules) rule(kind uint8, cur [3]byte) *feeRule {
	k := [4]byte{kind, cur[0], cur[1], cur[2]}
	if c.last != nil && c.lastKey == k {
		return c.last // rows of a file come in runs of one kind and currency
	}
	r, ok := c.rules[k]
	if !ok {
		r = &feeRule{}
		r.FeeRule, r.ok, r.err = c.contract.Rule(kindOf(kind), curString(cur))
		c.rules[k] = r
	}
	c.last, c.lastKey = r, k
	return r
}

// feeCheck is the fee check as the rows come: the day's totals by
// currency, and the rows off the contract. It is done as each row is
// indexed, while the row is at hand, on the goroutine that indexes while
// another parses.
type feeCheck struct {
	rules   feeRules
	totals  map[[3]byte]*reconcile.FeeTotal
	last    *reconcile.FeeTotal
	lastCur [3]byte
	off     []feeOff
}

// feeOff is a row whose fee is off the contract, and the contract's fee.
type feeOff struct {
	row  int32
	want int64
}

// checkFee adds row ri to the day's fees and checks it against the
// contract.
func (m *Matcher) checkFee(ri int32) {
	r := &m.rows[ri]
	if statusCodes[r.status] != reconcile.StatusSuccess {
		return
	}
	c := &m.feeCheck
	t, cur := c.last, m.rowCur(ri)
	if t == nil || cur != c.lastCur {
		if c.totals == nil {
			c.totals = map[[3]byte]*reconcile.FeeTotal{}
			c.rules = feeRules{contract: m.opts.Fees, rules: map[[4]byte]*feeRule{}}
		}
		if t = c.totals[cur]; t == nil {
			t = &reconcile.FeeTotal{Currency: curString(cur)}
			c.totals[cur] = t
		}
		c.last, c.lastCur = t, cur
	}
	t.Rows++
	t.Charged = reconcile.AddSaturating(t.Charged, r.fee)
	if m.opts.Fees == nil {
		return
	}
	rule := c.rules.rule(r.kind, cur)
	if !rule.ok {
		return
	}
	want, err := rule.Fee(r.amount)
	if err != nil {
		return // an amount past 10^16 minor units: no contract's fee is computed for it
	}
	t.Checked++
	t.ChargedChecked = reconcile.AddSaturating(t.ChargedChecked, r.fee)
	t.Expected = reconcile.AddSaturating(t.Expected, want)
	if reconcile.FeeDifference(r.fee, want) > rule.ToleranceMilli {
		c.off = append(c.off, feeOff{ri, want})
	}
}

// fees reports each row whose fee is off the contract by more than its
// tolerance, and returns the day's fees by currency.
func (m *Matcher) fees(add func(reconcile.Finding)) []reconcile.FeeTotal {
	c := &m.feeCheck
	for _, o := range c.off {
		add(m.feeMismatch(o.row, o.want, &c.rules.rule(m.rows[o.row].kind, m.rowCur(o.row)).FeeRule))
	}
	out := make([]reconcile.FeeTotal, 0, len(c.totals))
	for _, t := range c.totals {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Currency < out[j].Currency })
	return out
}

func (m *Matcher) feeMismatch(ri int32, want int64, rule *reconcile.FeeRule) reconcile.Finding {
	tx := m.transaction(ri)
	f := fromRow(tx, nil)
	f.Category = reconcile.FeeMismatch
	f.FeeMilli, f.ExpectedFeeMilli = tx.FeeMilli, want
	digits, _ := reconcile.CurrencyDigits(tx.Currency)
	fee := func(milli int64) string { return reconcile.FormatDecimal(milli, digits+3) + " " + tx.Currency }
	what := "payment for order " + tx.OrderNo
	if tx.Kind == reconcile.KindRefund {
		what = "refund " + tx.RefundNo
	}
	rate := ""
	if tx.FeeRate != "" {
		rate = fmt.Sprintf(" (the file says its rate is %s)", reconcile.Quote(tx.FeeRate))
	}
	f.Hint = fmt.Sprintf("The channel took a fee of %s on the %s (%s)%s; the contract (rate %s) says %s: %s apart.",
		fee(tx.FeeMilli), what, money(tx.Amount, tx.Currency), rate, rule.Rate, fee(want), fee(reconcile.AddSaturating(tx.FeeMilli, -want)))
	return f
}
