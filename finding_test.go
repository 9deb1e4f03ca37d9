package reconcile_test

import (
	"math"
	"testing"

	"reconcile"
)

// A dispute's money at risk: a chargeback's amount until the dispute is
// won; a chargeback missing from the merchant's record is its
// chargeback's money, counted there.
func TestAtRiskOfDisputes(t *testing.T) {
	cb := reconcile.Finding{Category: reconcile.Chargeback, Kind: reconcile.KindChargeback, HasChannel: true, ChannelAmount: 4999, Currency: "USD"}
	for status, want := range map[string]int64{reconcile.DisputeOpen: 4999, reconcile.DisputeLost: 4999, reconcile.DisputeWon: 0, "": 4999} {
		cb.Dispute = &reconcile.DisputeFacts{ID: "dp_1", Status: status}
		if got := cb.AtRisk(); got != want {
			t.Errorf("chargeback %q: at risk %d, want %d", status, got, want)
		}
	}
	unrecorded := reconcile.Finding{Category: reconcile.MissingLocal, Kind: reconcile.KindChargeback, HasChannel: true, ChannelAmount: 4999}
	payment := unrecorded
	payment.Kind = reconcile.KindPayment
	if unrecorded.AtRisk() != 0 || payment.AtRisk() != 4999 {
		t.Errorf("missing_local: chargeback %d, payment %d; want 0 and 4999", unrecorded.AtRisk(), payment.AtRisk())
	}
}

// TestResultAtRiskHolds: the night's money at risk holds at the largest
// int64 rather than wrapping to a small figure. A file cannot take it
// there (channelfeed refuses one past MaxFileTotal); our side's records
// beside it might.
func TestResultAtRiskHolds(t *testing.T) {
	big := reconcile.Finding{Category: reconcile.MissingChannel, Kind: reconcile.KindPayment, HasLocal: true, LocalAmount: math.MaxInt64, LocalCurrency: "CNY"}
	small := reconcile.Finding{Category: reconcile.MissingLocal, Kind: reconcile.KindPayment, HasChannel: true, ChannelAmount: 1002, Currency: "CNY"}
	res := reconcile.Result{Findings: []reconcile.Finding{big, big, small}}
	if got := res.AtRisk()["CNY"]; got != math.MaxInt64 {
		t.Errorf("money at risk %d, want it held at %d", got, int64(math.MaxInt64))
	}
}
