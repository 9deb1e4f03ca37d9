package reconcile_test

import (
	"testing"
	"unsafe"

	"reconcile"
)

// TestCloneOwnsItsText: a row kept past the parser's next row keeps what
// it said when the parser's buffer is written over.
func TestCloneOwnsItsText(t *testing.T) {
	buf := []byte("ORD1R1pi_1re_1USD0.029chargebackdp_1ch_1fraudulent")
	lent := func(from, to int) string { return unsafe.String(&buf[from], to-from) }
	tx := reconcile.Transaction{OrderNo: lent(0, 4), RefundNo: lent(4, 6), ChannelTxnID: lent(6, 10),
		ChannelRefundID: lent(10, 14), Currency: lent(14, 17), FeeRate: lent(17, 22), RawKind: lent(22, 32),
		DisputeID: lent(32, 36), PaymentID: lent(36, 40), Reason: lent(40, 50)}
	want := [...]string{"ORD1", "R1", "pi_1", "re_1", "USD", "0.029", "chargeback", "dp_1", "ch_1", "fraudulent"}
	got := tx.Clone()
	for i := range buf {
		buf[i] = '#'
	}
	for i, s := range [...]string{got.OrderNo, got.RefundNo, got.ChannelTxnID, got.ChannelRefundID, got.Currency,
		got.FeeRate, got.RawKind, got.DisputeID, got.PaymentID, got.Reason} {
		if s != want[i] {
			t.Errorf("field %d: got %q, want %q", i, s, want[i])
		}
	}
	if tx.OrderNo != "####" {
		t.Fatalf("the test's text was not lent: %q", tx.OrderNo)
	}
}
