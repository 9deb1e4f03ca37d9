package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"reconcile"
)

// DuplicateWindow is how close together a refund or a payment repeated
// under a new number must be to be suspected a duplicate (rules 9 and 10).
// "0s" turns a check off.
type DuplicateWindow struct {
	Refund  *Duration `json:"refund,omitempty"`  // default 24h
	Payment *Duration `json:"payment,omitempty"` // default 10m
}

// Bounds of a fee contract, so that no fee overflows in thousandths of a
// minor unit (reconcile.FeeRule): a tolerance of 10^9 minor units is 10^12
// thousandths, a fixed, minimum or maximum fee of 10^9 major units at most
// 10^15 (three decimals, such as KWD's, and three more), where a row's fee
// is at most 2^62 before the fixed part is added.
const (
	maxFeeTolerance = 1_000_000_000
	maxFeeMajor     = 1_000_000_000
)

// Defaults of DuplicateWindow.
const (
	defaultRefundWindow  = 24 * time.Hour
	defaultPaymentWindow = 10 * time.Minute
	maxDuplicateWindow   = 31 * 24 * time.Hour
)

// Windows are the channel's duplicate windows, refunds' and payments'.
func (ch Channel) Windows() (refund, payment time.Duration) {
	refund, payment = defaultRefundWindow, defaultPaymentWindow
	if w := ch.DuplicateWindow; w != nil {
		if w.Refund != nil {
			refund = time.Duration(*w.Refund)
		}
		if w.Payment != nil {
			payment = time.Duration(*w.Payment)
		}
	}
	return refund, payment
}

// NewKeyChecks says which checks of money moved twice under new keys are
// on for the channel: the duplicate windows and the fee contract, for
// check-config. customers, when not "", says why the payment check is off
// or unknown: the local orders do not carry the customer it needs.
func (ch Channel) NewKeyChecks(customers string) string {
	refund, payment := ch.Windows()
	var parts []string
	parts = append(parts, "over_refund on")
	parts = append(parts, windowNote("suspected_duplicate_refund", refund))
	switch {
	case payment <= 0:
		parts = append(parts, "suspected_duplicate_payment off (duplicate_window.payment is 0)")
	case customers != "":
		parts = append(parts, "suspected_duplicate_payment "+customers)
	default:
		parts = append(parts, windowNote("suspected_duplicate_payment", payment))
	}
	parts = append(parts, feeNote(ch))
	return strings.Join(parts, "; ")
}

func windowNote(check string, w time.Duration) string {
	if w <= 0 {
		return check + " off (its duplicate_window is 0)"
	}
	return check + " within " + w.String()
}

// feeNote says what fee contract the channel checks its rows against.
func feeNote(ch Channel) string {
	c := ch.Fees()
	if c == nil {
		return "fee_mismatch off (no fee contract)"
	}
	terms := func(kind string, t *reconcile.FeeTerms) string {
		if t == nil {
			return kind + " not checked"
		}
		if t.ReturnsShare {
			return kind + " returns its share"
		}
		s := fmt.Sprintf("%s rate %s %s", kind, t.RateText(), t.Rounding)
		for _, p := range [][2]string{{"fixed", t.Fixed}, {"min", t.Min}, {"max", t.Max}} {
			if p[1] != "" {
				s += " " + p[0] + " " + p[1]
			}
		}
		return s
	}
	return fmt.Sprintf("fee_mismatch against %s, %s, %s, tolerance %d", terms("payment", c.Payment), terms("refund", c.Refund),
		terms("dispute_fee", c.Dispute), c.Tolerance)
}

// FeeContract is a channel's fee contract as the config writes it: terms
// per kind of row. A kind left out is not checked.
type FeeContract struct {
	Payment *FeeTerms `json:"payment,omitempty"`
	Refund  *FeeTerms `json:"refund,omitempty"`
	// Dispute is what a chargeback costs (rule 14): a fixed fee,
	// {"fixed": "15.00"}.
	Dispute *FeeTerms `json:"dispute_fee,omitempty"`
}

// FeeTerms are the terms for one kind of row. Rate is a decimal fraction
// of the amount ("0.006" is 0.6 %); Fixed, Min and Max are in major units
// of the row's currency ("0.30"); Rounding is half-up (the default),
// half-even, up or down; Places is the decimals of the major unit the fee
// is rounded to (default: the currency's; 5 for a WeChat Pay bill that
// keeps its fees unrounded). ReturnsShare, on refunds: the refund gives
// back the payment fee's share of its amount.
type FeeTerms struct {
	Rate         string `json:"rate,omitempty"`
	Fixed        string `json:"fixed,omitempty"`
	Min          string `json:"min,omitempty"`
	Max          string `json:"max,omitempty"`
	Rounding     string `json:"rounding,omitempty"`
	Places       *int   `json:"places,omitempty"`
	ReturnsShare bool   `json:"returns_share,omitempty"`
}

// Fees is the channel's contract for the matcher: nil when the config
// states none. Call it on a channel whose Problems are none.
func (ch Channel) Fees() *reconcile.FeeContract {
	if ch.Fee == nil {
		return nil
	}
	c := &reconcile.FeeContract{Tolerance: ch.FeeTolerance}
	c.Payment, _ = ch.Fee.Payment.terms()
	c.Refund, _ = ch.Fee.Refund.terms()
	c.Dispute, _ = ch.Fee.Dispute.terms()
	return c
}

func (t *FeeTerms) terms() (*reconcile.FeeTerms, error) {
	if t == nil {
		return nil, nil
	}
	out := &reconcile.FeeTerms{Fixed: t.Fixed, Min: t.Min, Max: t.Max, Rounding: reconcile.RoundHalfUp,
		Places: -1, ReturnsShare: t.ReturnsShare}
	if t.Rate != "" {
		v, err := reconcile.ParseDecimal(t.Rate, 9)
		if err != nil {
			return nil, fmt.Errorf("rate: %w (a fraction of the amount with at most 9 decimals, such as \"0.006\")", err)
		}
		if v < 0 || v > 1_000_000_000 {
			return nil, fmt.Errorf("rate %s: want a fraction from 0 to 1", reconcile.Quote(t.Rate))
		}
		out.RateNano = v
	}
	if t.Rounding != "" {
		if !slices.Contains(reconcile.Roundings, reconcile.Rounding(t.Rounding)) {
			return nil, fmt.Errorf("rounding %s: want half-up, half-even, up or down", reconcile.Quote(t.Rounding))
		}
		out.Rounding = reconcile.Rounding(t.Rounding)
	}
	if t.Places != nil {
		if *t.Places < 0 || *t.Places > 6 {
			return nil, fmt.Errorf("places %d: want 0 to 6", *t.Places)
		}
		out.Places = *t.Places
	}
	var min, max int64
	for _, f := range []struct {
		name string
		v    string
		into *int64
	}{{"fixed", t.Fixed, nil}, {"min", t.Min, &min}, {"max", t.Max, &max}} {
		if f.v == "" {
			continue
		}
		v, err := reconcile.ParseDecimal(f.v, 6)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (an amount in major units, such as \"0.30\")", f.name, err)
		}
		if v < 0 {
			return nil, fmt.Errorf("%s %s is negative", f.name, reconcile.Quote(f.v))
		}
		if v > maxFeeMajor*1_000_000 {
			return nil, fmt.Errorf("%s %s: at most %d major units", f.name, reconcile.Quote(f.v), int64(maxFeeMajor))
		}
		if f.into != nil {
			*f.into = v
		}
	}
	if t.Min != "" && t.Max != "" && min > max {
		return nil, fmt.Errorf("min %s is more than max %s", reconcile.Quote(t.Min), reconcile.Quote(t.Max))
	}
	return out, nil
}

// feeProblems lists what is wrong with a channel's fee contract and
// duplicate windows.
func (ch Channel) feeProblems(at, where string) []error {
	var errs []error
	if w := ch.DuplicateWindow; w != nil {
		for _, d := range []struct {
			name string
			v    *Duration
		}{{"refund", w.Refund}, {"payment", w.Payment}} {
			if d.v != nil && time.Duration(*d.v) > maxDuplicateWindow {
				errs = append(errs, fieldErrorf(at+".duplicate_window."+d.name, "%s: duplicate_window.%s %s: at most %s",
					where, d.name, time.Duration(*d.v), maxDuplicateWindow))
			}
		}
	}
	if ch.FeeTolerance < 0 || ch.FeeTolerance > maxFeeTolerance {
		errs = append(errs, fieldErrorf(at+".fee_tolerance", "%s: fee_tolerance %d: want 0 to %d minor units", where, ch.FeeTolerance, int64(maxFeeTolerance)))
	}
	if ch.Fee == nil {
		if ch.FeeTolerance != 0 {
			errs = append(errs, fieldErrorf(at+".fee_tolerance", "%s: fee_tolerance without a \"fee\" contract checks nothing", where))
		}
		return errs
	}
	for _, k := range []struct {
		name  string
		terms *FeeTerms
	}{{"payment", ch.Fee.Payment}, {"refund", ch.Fee.Refund}, {"dispute_fee", ch.Fee.Dispute}} {
		if _, err := k.terms.terms(); err != nil {
			errs = append(errs, fieldErrorf(at+".fee."+k.name, "%s: fee.%s: %s", where, k.name, err))
		}
		if k.terms != nil && k.terms.ReturnsShare && k.name != "refund" {
			errs = append(errs, fieldErrorf(at+".fee."+k.name, "%s: fee.%s: returns_share is for refunds", where, k.name))
		}
	}
	if r := ch.Fee.Refund; r != nil && r.ReturnsShare {
		if ch.Fee.Payment == nil {
			errs = append(errs, fieldErrorf(at+".fee.refund", "%s: fee.refund.returns_share needs fee.payment, whose share it returns", where))
		}
		if r.Rate != "" || r.Fixed != "" || r.Min != "" || r.Max != "" {
			errs = append(errs, fieldErrorf(at+".fee.refund", "%s: fee.refund: returns_share takes the payment's rate; give it no rate, fixed, min or max of its own", where))
		}
	}
	if ch.Fee.Payment == nil && ch.Fee.Refund == nil && ch.Fee.Dispute == nil {
		errs = append(errs, fieldErrorf(at+".fee", "%s: fee: give terms for payment, refund, dispute_fee or some of them", where))
	}
	return errs
}
