package matcher

import (
	"fmt"
	"sort"

	"reconcile"
	"reconcile/matcher/rowstore"
)

// Rule 11: where the channel's contract is known (Options.Fees), each
// settled row's fee is set against the contract's fee for its kind,
// amount and currency. Every row is looked at, as plain numbers
// (rowstore.RowTerms), in the store's order.

// feeRules caches a contract's rule per kind and currency: a file has a
// handful of currencies.
type feeRules struct {
	contract *reconcile.FeeContract
	rules    map[feeKey]*feeRule
	last     *feeRule
	lastKey  feeKey
}

type feeKey struct {
	kind reconcile.Kind
	cur  [3]byte
}

type feeRule struct {
	reconcile.FeeRule
	ok  bool
	err error
}

func (c *feeRules) rule(kind reconcile.Kind, cur [3]byte) *feeRule {
	k := feeKey{kind, cur}
	if c.last != nil && c.lastKey == k {
		return c.last // rows of a file come in runs of one kind and currency
	}
	r, ok := c.rules[k]
	if !ok {
		r = &feeRule{}
		r.FeeRule, r.ok, r.err = c.contract.Rule(kind, curString(cur))
		c.rules[k] = r
	}
	c.last, c.lastKey = r, k
	return r
}

// feeDay is the day's fees: its totals by currency, as the rows are
// looked at.
type feeDay struct {
	totals  map[[3]byte]*reconcile.FeeTotal
	last    *reconcile.FeeTotal
	lastCur [3]byte
}

func (d *feeDay) total(cur [3]byte) *reconcile.FeeTotal {
	if d.last != nil && cur == d.lastCur {
		return d.last
	}
	t := d.totals[cur]
	if t == nil {
		t = &reconcile.FeeTotal{Currency: curString(cur)}
		d.totals[cur] = t
	}
	d.last, d.lastCur = t, cur
	return t
}

// checkFee adds a settled row to the day's fees and checks it against the
// contract's rule for it: off says its fee is off the contract by more
// than the rule's tolerance, want the contract's fee.
func checkFee(t *reconcile.FeeTotal, rule *feeRule, r rowstore.RowTerms) (want int64, off bool) {
	t.Rows++
	t.Charged = reconcile.AddSaturating(t.Charged, r.FeeMilli)
	if rule == nil || !rule.ok {
		return 0, false
	}
	want, err := rule.Fee(r.Amount)
	if err != nil {
		return 0, false // an amount past 10^16 minor units: no contract's fee is computed for it
	}
	t.Checked++
	t.ChargedChecked = reconcile.AddSaturating(t.ChargedChecked, r.FeeMilli)
	t.Expected = reconcile.AddSaturating(t.Expected, want)
	return want, reconcile.FeeDifference(r.FeeMilli, want) > rule.ToleranceMilli
}

// fees applies rule 11 to every settled row: it reports each whose fee is
// off the contract by more than its tolerance, and returns the day's fees
// by currency.
func (m *Matcher) fees(add func(reconcile.Finding)) []reconcile.FeeTotal {
	day := feeDay{totals: map[[3]byte]*reconcile.FeeTotal{}}
	var rules *feeRules
	if m.opts.Fees != nil {
		rules = &feeRules{contract: m.opts.Fees, rules: map[feeKey]*feeRule{}}
	}
	for ri := range int32(m.store.RowCount()) {
		r := m.store.Row(ri)
		if r.Status != reconcile.StatusSuccess {
			continue
		}
		var rule *feeRule
		if rules != nil {
			rule = rules.rule(r.Kind, r.Currency)
		}
		if want, off := checkFee(day.total(r.Currency), rule, r); off {
			add(feeMismatch(m.store.Transaction(ri), want, &rule.FeeRule))
		}
	}
	out := make([]reconcile.FeeTotal, 0, len(day.totals))
	for _, t := range day.totals {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Currency < out[j].Currency })
	return out
}

func feeMismatch(tx reconcile.Transaction, want int64, rule *reconcile.FeeRule) reconcile.Finding {
	f := fromRow(tx, nil)
	f.Category = reconcile.FeeMismatch
	f.FeeMilli, f.ExpectedFeeMilli = tx.FeeMilli, want
	digits, _ := reconcile.CurrencyDigits(tx.Currency)
	fee := func(milli int64) string { return reconcile.FormatDecimal(milli, digits+3) + " " + tx.Currency }
	what := "payment for order " + tx.OrderNo
	switch tx.Kind {
	case reconcile.KindRefund:
		what = "refund " + tx.RefundNo
	case reconcile.KindChargeback, reconcile.KindSecondChargeback:
		what = "chargeback of order " + tx.OrderNo + " (dispute " + tx.DisputeID + ")"
	}
	rate := ""
	if tx.FeeRate != "" {
		rate = fmt.Sprintf(" (the file says its rate is %s)", reconcile.Quote(tx.FeeRate))
	}
	f.Hint = fmt.Sprintf("The channel took a fee of %s on the %s (%s)%s; the contract (rate %s) says %s: %s apart.",
		fee(tx.FeeMilli), what, money(tx.Amount, tx.Currency), rate, rule.Rate, fee(want), fee(reconcile.AddSaturating(tx.FeeMilli, -want)))
	return f
}
