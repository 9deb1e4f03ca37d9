package reconcile

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// A channel's fee contract says what it may take for a row: a rate of the
// amount, a fixed part, a minimum and a maximum, rounded one stated way,
// per kind of row. Everything is exact: rates are kept in billionths,
// fees in thousandths of a minor unit (Transaction.FeeMilli), and the
// rounding is done on integers.

// Rounding is how a contract's fee is rounded to its precision.
type Rounding string

const (
	RoundHalfUp   Rounding = "half-up"   // 0.5 goes away from zero
	RoundHalfEven Rounding = "half-even" // 0.5 goes to the even neighbour
	RoundUp       Rounding = "up"        // any part goes away from zero
	RoundDown     Rounding = "down"      // any part is dropped
)

// Roundings lists the rounding words a contract may use.
var Roundings = []Rounding{RoundHalfUp, RoundHalfEven, RoundUp, RoundDown}

// FeeTerms is the contract for one kind of row. Rate is a fraction of the
// amount ("0.006" is 0.6 %), in billionths; Fixed, Min and Max are in
// major units, as decimal strings (empty: none); Places is how many
// decimals of the major unit the fee is rounded to, -1 for the currency's
// own (a WeChat Pay bill keeps five).
type FeeTerms struct {
	RateNano int64
	Fixed    string
	Min, Max string
	Rounding Rounding
	Places   int
	// ReturnsShare, for refunds: the refund gives back the share of the
	// payment's fee its amount stands for, as a negative fee computed with
	// the payment's rate and rounding (no fixed part, minimum or maximum).
	ReturnsShare bool
}

// FeeContract is a channel's fee contract. A kind without terms is not
// checked.
type FeeContract struct {
	Payment, Refund *FeeTerms
	// Dispute is the fee a chargeback costs, of either round: a fixed
	// fee, as the schemes' and channels' price lists state it.
	Dispute *FeeTerms
	// Tolerance is how far, in minor units, a row's fee may be from the
	// contract's before it is a fee_mismatch.
	Tolerance int64
}

// FeeRule is a contract's terms for one kind and currency, ready to be
// applied to millions of rows without parsing anything again.
type FeeRule struct {
	rateNano        int64
	fixed, min, max int64 // thousandths of a minor unit
	hasMin, hasMax  bool
	quantum         int64 // the fee is a multiple of it, in thousandths
	rounding        Rounding
	negative        bool // a returned share
	ToleranceMilli  int64
	Rate            string // the rate as the contract gives it, for hints
	Currency        string
}

// ErrFeeRange is a fee too large to compute exactly.
var ErrFeeRange = errors.New("fee out of range")

// Rule gives the contract's rule for a kind of row in a currency; ok is
// false when the contract says nothing of that kind.
func (c *FeeContract) Rule(kind Kind, currency string) (r FeeRule, ok bool, err error) {
	if c == nil {
		return FeeRule{}, false, nil
	}
	terms, negative := c.Payment, false
	switch kind {
	case KindChargeback, KindSecondChargeback:
		terms = c.Dispute
	case KindPayment:
	case KindRefund:
		terms = c.Refund
		if terms != nil && terms.ReturnsShare {
			if c.Payment == nil {
				return FeeRule{}, false, fmt.Errorf("a refund returns its share of a payment fee the contract does not state")
			}
			share := *c.Payment
			share.Fixed, share.Min, share.Max = "", "", ""
			terms, negative = &share, true
		}
	default:
		terms = nil // a reversal's or a batch's fee is not the contract's
	}
	if terms == nil {
		return FeeRule{}, false, nil
	}
	digits, known := CurrencyDigits(currency)
	if !known {
		return FeeRule{}, false, fmt.Errorf("%w %s", ErrUnknownCurrency, Quote(currency))
	}
	r = FeeRule{rateNano: terms.RateNano, rounding: terms.Rounding, negative: negative,
		ToleranceMilli: c.Tolerance * 1000, Rate: rateText(terms.RateNano), Currency: currency}
	places := terms.Places
	if places < 0 {
		places = digits
	}
	// Fees are kept to three decimals past the currency's: a contract's
	// finer places (five for a currency without decimals) round there.
	places = min(places, digits+3)
	r.quantum = pow10(digits + 3 - places)
	milli := func(s string) (int64, bool, error) {
		if s == "" {
			return 0, false, nil
		}
		v, err := ParseDecimal(s, digits+3)
		return v, true, err
	}
	if r.fixed, _, err = milli(terms.Fixed); err != nil {
		return FeeRule{}, false, fmt.Errorf("fixed fee: %w", err)
	}
	if r.min, r.hasMin, err = milli(terms.Min); err != nil {
		return FeeRule{}, false, fmt.Errorf("minimum fee: %w", err)
	}
	if r.max, r.hasMax, err = milli(terms.Max); err != nil {
		return FeeRule{}, false, fmt.Errorf("maximum fee: %w", err)
	}
	return r, true, nil
}

// Fee is the contract's fee for a row of amount minor units, in
// thousandths of a minor unit: negative for a returned share.
func (r *FeeRule) Fee(amount int64) (int64, error) {
	if amount < 0 {
		amount = -amount
	}
	// amount × rate in thousandths of a minor unit is
	// amount × rateNano × 1000 / 10^9, rounded to a multiple of quantum:
	// a 128-bit product over one divisor.
	hi, lo := bits.Mul64(uint64(amount), uint64(r.rateNano))
	div := uint64(1_000_000 * r.quantum)
	if hi >= div {
		return 0, ErrFeeRange
	}
	q, rem := bits.Div64(hi, lo, div)
	switch r.rounding {
	case RoundUp:
		if rem > 0 {
			q++
		}
	case RoundHalfUp:
		if 2*rem >= div {
			q++
		}
	case RoundHalfEven:
		if 2*rem > div || 2*rem == div && q%2 == 1 {
			q++
		}
	}
	if q > uint64(1<<62)/uint64(r.quantum) {
		return 0, ErrFeeRange
	}
	fee := int64(q)*r.quantum + r.fixed
	if r.hasMin && fee < r.min {
		fee = r.min
	}
	if r.hasMax && fee > r.max {
		fee = r.max
	}
	if r.negative {
		fee = -fee
	}
	return fee, nil
}

// RateText is the rate as a contract would write it: "0.006".
func (t FeeTerms) RateText() string { return rateText(t.RateNano) }

// rateText is a rate as a contract would write it: "0.006".
func rateText(nano int64) string {
	s := strings.TrimRight(FormatDecimal(nano, 9), "0")
	return strings.TrimSuffix(s, ".")
}

func pow10(n int) int64 {
	v := int64(1)
	for range n {
		v *= 10
	}
	return v
}

// FeeTotal is a day's fees in one currency, in thousandths of a minor
// unit: Charged over every settled row, Expected and Checked over the rows
// the contract covers (Checked of Rows).
type FeeTotal struct {
	Currency string `json:"currency"`
	Rows     int    `json:"rows"`
	Checked  int    `json:"checked"`
	Charged  int64  `json:"charged_milli"`
	Expected int64  `json:"expected_milli"`
	// ChargedChecked is the part of Charged carried by the checked rows,
	// which Expected is to be set against.
	ChargedChecked int64 `json:"charged_checked_milli"`
}

// AddFees adds the fee totals b to a, currency by currency.
func AddFees(a, b []FeeTotal) []FeeTotal {
	out := slices.Clone(a)
	for _, t := range b {
		i := slices.IndexFunc(out, func(x FeeTotal) bool { return x.Currency == t.Currency })
		if i < 0 {
			out = append(out, t)
			continue
		}
		o := &out[i]
		o.Rows += t.Rows
		o.Checked += t.Checked
		o.Charged = AddSaturating(o.Charged, t.Charged)
		o.Expected = AddSaturating(o.Expected, t.Expected)
		o.ChargedChecked = AddSaturating(o.ChargedChecked, t.ChargedChecked)
	}
	slices.SortFunc(out, func(x, y FeeTotal) int { return strings.Compare(x.Currency, y.Currency) })
	return out
}

// FormatFee writes a fee in thousandths of a minor unit as a decimal of
// the major unit: with the currency's decimals, and up to three more where
// the fee has them ("2.68740" CNY, "3.20" USD).
func FormatFee(milli int64, currency string) string {
	digits, _ := CurrencyDigits(currency)
	s := FormatDecimal(milli, digits+3)
	for i := 0; i < 3 && strings.HasSuffix(s, "0"); i++ {
		s = s[:len(s)-1]
	}
	return strings.TrimSuffix(s, ".")
}

// AddSaturating adds two amounts or fees, signed, holding at the ends of
// int64 rather than wrapping: a hostile file's values are int64 each, not
// their sums.
func AddSaturating(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// AddChecked adds two amounts or fees, signed, reporting false where
// the sum is past int64: where a file's total must be refused, not held.
func AddChecked(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// FeeDifference is |a − b|, held at the largest int64.
func FeeDifference(a, b int64) int64 {
	d := a - b
	if (a < 0) != (b < 0) && (d < 0) != (a < 0) {
		return math.MaxInt64 // the subtraction overflowed: past int64 either way
	}
	if d < 0 {
		d = -max(d, -math.MaxInt64)
	}
	return d
}

// Difference is what the checked rows were charged past the contract's
// fee: negative when they were charged less.
func (t FeeTotal) Difference() int64 {
	return AddSaturating(t.ChargedChecked, -max(t.Expected, -math.MaxInt64))
}
