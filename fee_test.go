package reconcile

import (
	"errors"
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
