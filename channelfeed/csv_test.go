package channelfeed

import (
	"testing"

	"reconcile"
)

// TestCSVChargebacksFacts pins what the golden file of the canonical
// CSV's chargebacks case must say.
func TestCSVChargebacksFacts(t *testing.T) {
	byLine := rowsByLine(t, "csv", "chargebacks")
	tests := []struct {
		line                      int
		kind                      reconcile.Kind
		orderNo, dispute, payment string
		amount                    int64
	}{
		{3, reconcile.KindChargeback, "ORD6001", "DSP-6001", "TXN-6001", 12000},
		{4, reconcile.KindChargebackReversal, "ORD6001", "DSP-6001", "TXN-6001", 12000},
		{5, reconcile.KindSecondChargeback, "ORD6001", "DSP-6001", "TXN-6001", 12000}, // Second_Chargeback
		{6, reconcile.KindChargeback, "", "CB-6002", "TXN-6002", 3000},                // no order_no, no dispute_id
		{8, reconcile.KindRefundReversal, "ORD6003", "", "TXN-6003", 1000},
		{9, reconcile.KindPayment, "ORD6004", "", "", 500}, // the dispute columns of a payment are not read
		{10, reconcile.KindChargeback, "ORD6004", "CB-6004", "TXN-6004", 500},
	}
	for _, tt := range tests {
		r := byLine[tt.line]
		if r.Kind != tt.kind || r.OrderNo != tt.orderNo || r.DisputeID != tt.dispute || r.PaymentID != tt.payment || r.Amount != tt.amount {
			t.Errorf("line %d = %+v, want %s of %q, dispute %q, payment %q, Amount %d", tt.line, r, tt.kind, tt.orderNo, tt.dispute, tt.payment, tt.amount)
		}
	}
	if r := byLine[4]; r.FeeMilli != -1500000 || r.Reason != "fraudulent" {
		t.Errorf("line 4 = %+v, want the fee of 15.00 returned, reason fraudulent", r)
	}
	if r := byLine[8]; r.RefundNo != "RF6003" {
		t.Errorf("line 8 RefundNo = %q, want RF6003", r.RefundNo)
	}
}
