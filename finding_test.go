package reconcile_test

import (
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
