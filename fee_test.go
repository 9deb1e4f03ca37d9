package reconcile

import (
	"errors"
	"math"
	"testing"
)

func TestFeeRule(t *testing.T) {
	terms := func(rate int64, r Rounding) *FeeTerms {
		return &FeeTerms{RateNano: rate, Rounding: r, Places: -1}
	}
	tests := []struct {
		name     string
		contract FeeContract
		kind     Kind
		currency string
		amount   int64
		want     int64 // thousandths of a minor unit
	}{
		// 0.6 % of 0.75 CNY is 0.45 fen.
		{"half-up below half", FeeContract{Payment: terms(6_000_000, RoundHalfUp)}, KindPayment, "CNY", 75, 0},
		{"half-up at half", FeeContract{Payment: terms(5_000_000, RoundHalfUp)}, KindPayment, "CNY", 100, 1000}, // 0.5 fen
		{"half-even at half, to even", FeeContract{Payment: terms(5_000_000, RoundHalfEven)}, KindPayment, "CNY", 100, 0},
		{"half-even at one and a half", FeeContract{Payment: terms(5_000_000, RoundHalfEven)}, KindPayment, "CNY", 300, 2000},
		{"up", FeeContract{Payment: terms(6_000_000, RoundUp)}, KindPayment, "CNY", 75, 1000},
		{"down", FeeContract{Payment: terms(6_000_000, RoundDown)}, KindPayment, "CNY", 199, 1000}, // 1.194 fen
		{"WeChat's five places", FeeContract{Payment: &FeeTerms{RateNano: 6_000_000, Rounding: RoundHalfUp, Places: 5}}, KindPayment, "CNY", 123, 738},
		{"yen has no decimals", FeeContract{Payment: terms(36_000_000, RoundHalfUp)}, KindPayment, "JPY", 1000, 36000},
		{"fixed part", FeeContract{Payment: &FeeTerms{RateNano: 29_000_000, Fixed: "0.30", Rounding: RoundHalfUp, Places: -1}}, KindPayment, "USD", 10000, 320_000},
		{"minimum", FeeContract{Payment: &FeeTerms{RateNano: 6_000_000, Min: "0.01", Rounding: RoundHalfUp, Places: -1}}, KindPayment, "CNY", 10, 1000},
		{"maximum", FeeContract{Payment: &FeeTerms{RateNano: 6_000_000, Max: "25", Rounding: RoundHalfUp, Places: -1}}, KindPayment, "CNY", 100_000_00, 2_500_000},
		{"a refund returns its share", FeeContract{Payment: terms(6_000_000, RoundHalfUp), Refund: &FeeTerms{ReturnsShare: true}}, KindRefund, "CNY", 5000, -30_000},
		{"a refund's own fee", FeeContract{Payment: terms(6_000_000, RoundHalfUp), Refund: &FeeTerms{Fixed: "1", Places: -1, Rounding: RoundHalfUp}}, KindRefund, "CNY", 5000, 100_000},
		{"a dispute fee", FeeContract{Payment: terms(6_000_000, RoundHalfUp), Dispute: &FeeTerms{Fixed: "15.00", Places: -1, Rounding: RoundHalfUp}}, KindChargeback, "USD", 4999, 1_500_000},
		{"a second chargeback's fee", FeeContract{Dispute: &FeeTerms{Fixed: "15.00", Places: -1, Rounding: RoundHalfUp}}, KindSecondChargeback, "USD", 4999, 1_500_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok, err := tt.contract.Rule(tt.kind, tt.currency)
			if err != nil || !ok {
				t.Fatalf("Rule: %v, %v", ok, err)
			}
			got, err := r.Fee(tt.amount)
			if err != nil || got != tt.want {
				t.Errorf("Fee(%d) = %d, %v; want %d", tt.amount, got, err, tt.want)
			}
		})
	}
}

// A contract's terms cover their own kinds: a dispute fee is no
// payment's, and a reversal's fee is nobody's.
func TestFeeRuleKinds(t *testing.T) {
	fixed := func(v string) *FeeTerms { return &FeeTerms{Fixed: v, Places: -1, Rounding: RoundHalfUp} }
	c := FeeContract{Payment: fixed("0.30"), Dispute: fixed("15.00")}
	for kind, want := range map[Kind]bool{KindPayment: true, KindChargeback: true, KindSecondChargeback: true,
		KindRefund: false, KindChargebackReversal: false, KindRefundReversal: false, KindBatch: false, KindOther: false} {
		if _, ok, err := c.Rule(kind, "USD"); ok != want || err != nil {
			t.Errorf("Rule(%s): %v, %v; want %v", kind, ok, err, want)
		}
	}
	if _, ok, _ := (&FeeContract{Payment: fixed("0.30")}).Rule(KindChargeback, "USD"); ok {
		t.Error("a contract without dispute_fee checks chargebacks")
	}
}

func TestFeeRuleRefusals(t *testing.T) {
	c := FeeContract{Payment: &FeeTerms{RateNano: 1_000_000_000, Rounding: RoundHalfUp, Places: -1}}
	if _, ok, _ := c.Rule(KindRefund, "CNY"); ok {
		t.Error("a contract without refund terms checks refunds")
	}
	if _, _, err := c.Rule(KindPayment, "XXX"); !errors.Is(err, ErrUnknownCurrency) {
		t.Errorf("unknown currency: %v", err)
	}
	r, _, _ := c.Rule(KindPayment, "CNY")
	if _, err := r.Fee(1 << 62); !errors.Is(err, ErrFeeRange) {
		t.Errorf("a fee past exact arithmetic: %v", err)
	}
	share := FeeContract{Refund: &FeeTerms{ReturnsShare: true}}
	if _, _, err := share.Rule(KindRefund, "CNY"); err == nil {
		t.Error("a share of a payment fee no contract states")
	}
}

// TestFeeArithmeticHolds: a hostile file's fees near the ends of int64
// hold there instead of wrapping into a negative amount charged or at
// risk.
func TestFeeArithmeticHolds(t *testing.T) {
	if got := AddSaturating(math.MaxInt64, 1); got != math.MaxInt64 {
		t.Errorf("AddSaturating(max, 1) = %d", got)
	}
	if got := AddSaturating(math.MinInt64, -1); got != math.MinInt64 {
		t.Errorf("AddSaturating(min, -1) = %d", got)
	}
	if got := FeeDifference(math.MaxInt64, -5); got != math.MaxInt64 {
		t.Errorf("FeeDifference(max, -5) = %d", got)
	}
	if got := FeeDifference(math.MinInt64, 5); got != math.MaxInt64 {
		t.Errorf("FeeDifference(min, 5) = %d", got)
	}
	if got := FeeDifference(-3, 4); got != 7 {
		t.Errorf("FeeDifference(-3, 4) = %d", got)
	}
	f := Finding{Category: FeeMismatch, FeeMilli: math.MinInt64, ExpectedFeeMilli: 30_000}
	if r := f.AtRisk(); r <= 0 {
		t.Errorf("AtRisk of a fee at the end of int64: %d", r)
	}
	f = Finding{Category: FeeMismatch, FeeMilli: 61_001, ExpectedFeeMilli: 60_000}
	if r := f.AtRisk(); r != 2 {
		t.Errorf("AtRisk of 1.001 minor units: %d, want 2", r)
	}
	// Five places on a currency without decimals: the fee is kept to
	// three past it, and rounded there.
	c := FeeContract{Payment: &FeeTerms{RateNano: 6_000_000, Rounding: RoundHalfUp, Places: 5}}
	r, ok, err := c.Rule(KindPayment, "JPY")
	if err != nil || !ok {
		t.Fatalf("JPY at five places: %v, %v", ok, err)
	}
	if got, _ := r.Fee(1234); got != 7404 { // 7.404 yen
		t.Errorf("Fee(1234 JPY) = %d, want 7404", got)
	}
}
