package reports

import (
	"math"
	"testing"

	"reconcile"
)

// TestCategoryTotalsHold: the Summary's totals hold at the largest int64
// rather than wrapping to a small figure, as the night's money at risk
// does.
func TestCategoryTotalsHold(t *testing.T) {
	big := reconcile.Finding{Category: reconcile.MissingLocal, Kind: reconcile.KindPayment, HasChannel: true,
		ChannelAmount: math.MaxInt64, Currency: "CNY"}
	small := big
	small.ChannelAmount = 1002
	got := categoryTotals([]reconcile.Finding{big, big, small})[reconcile.MissingLocal]["CNY"]
	if got == nil || got.count != 3 || got.channel != math.MaxInt64 || got.risk != math.MaxInt64 {
		t.Fatalf("missing_local CNY: %+v, want 3 findings, channel and risk held at %d", got, int64(math.MaxInt64))
	}
	ours := reconcile.Finding{Category: reconcile.MissingChannel, Kind: reconcile.KindPayment, HasLocal: true,
		LocalAmount: math.MaxInt64, LocalCurrency: "CNY"}
	few := ours
	few.LocalAmount = 1002
	got = categoryTotals([]reconcile.Finding{ours, ours, few})[reconcile.MissingChannel]["CNY"]
	if got == nil || got.local != math.MaxInt64 || got.risk != math.MaxInt64 {
		t.Fatalf("missing_channel CNY: %+v, want our side and risk held at %d", got, int64(math.MaxInt64))
	}
}
