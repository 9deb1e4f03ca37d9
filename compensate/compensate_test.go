package compensate_test

import (
	"testing"

	"reconcile"
	"reconcile/compensate"
)

func TestPlan(t *testing.T) {
	findings := []reconcile.Finding{
		{Category: reconcile.DuplicateRefund, Kind: reconcile.KindRefund, OrderNo: "O5", RefundNo: "R3",
			ChannelTxnID: "RT4", OriginalTxnID: "RT3", ChannelAmount: 5990, Currency: "CNY", AutoReverse: true},
		{Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment, OrderNo: "O1",
			ChannelTxnID: "T2", OriginalTxnID: "T1", ChannelAmount: 100, Currency: "JPY", AutoReverse: true},
		{Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment, OrderNo: "O2",
			ChannelTxnID: "T9", ChannelAmount: 100, Currency: "CNY"}, // needs review: no journal
		{Category: reconcile.AmountMismatch, Kind: reconcile.KindPayment, OrderNo: "O7", ChannelAmount: 8000, Currency: "CNY"},
	}
	js := compensate.Plan("wechatpay", findings)
	if len(js) != 2 {
		t.Fatalf("journals: got %d, want 2", len(js))
	}
	tests := []struct {
		name      string
		j         reconcile.Journal
		key       string
		clearing  int64 // what the reversal does to the channel's clearing account
		customers string
	}{
		{"refund", js[0], "reversal/wechatpay/RT4", 5990, compensate.CustomerRefunds},
		{"payment", js[1], "reversal/wechatpay/T2", -100, compensate.CustomerPayments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.j.IdempotencyKey != tt.key {
				t.Errorf("key: got %q, want %q", tt.j.IdempotencyKey, tt.key)
			}
			if tt.j.Kind != reconcile.JournalKindReversal {
				t.Errorf("kind: got %q, want reversal", tt.j.Kind)
			}
			if !tt.j.Lines.Balanced() {
				t.Errorf("lines not balanced: %+v", tt.j.Lines)
			}
			got := map[string]int64{}
			for _, l := range tt.j.Lines {
				got[l.Account] += l.Amount
			}
			if got["channel:wechatpay:clearing"] != tt.clearing || got[tt.customers] != -tt.clearing {
				t.Errorf("lines: got %v, want clearing %d and %s %d", got, tt.clearing, tt.customers, -tt.clearing)
			}
		})
	}
}

func TestReversalUndoesBooking(t *testing.T) {
	f := reconcile.Finding{Kind: reconcile.KindRefund, ChannelAmount: 123, Currency: "KWD"}
	booked := compensate.Booked("adyen", f)
	all := append(append(reconcile.Postings{}, booked...), booked.Reverse()...)
	net := map[string]int64{}
	for _, p := range all {
		net[p.Account] += p.Amount
	}
	for acct, v := range net {
		if v != 0 {
			t.Errorf("account %s: got net %d after booking and reversal, want 0", acct, v)
		}
	}
}
