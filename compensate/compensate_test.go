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

// TestApproved: an approved duplicate gets the journal an automatic
// reversal of its row would have had; a row without a channel id gets a
// key of its own from its fingerprint; other findings get none.
func TestApproved(t *testing.T) {
	dup := reconcile.Finding{Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment, OrderNo: "O1",
		ChannelTxnID: "T2", HasChannel: true, ChannelAmount: 100, Currency: "CNY"}
	j, err := compensate.Approved("acme", dup)
	if err != nil {
		t.Fatal(err)
	}
	auto := dup
	auto.AutoReverse = true
	if plan := compensate.Plan("acme", []reconcile.Finding{auto}); len(plan) != 1 || plan[0].IdempotencyKey != j.IdempotencyKey ||
		plan[0].IdempotencyKey != "reversal/acme/T2" || plan[0].Row != "T2" {
		t.Errorf("approved %q, automatic %+v: want the same key reversal/acme/T2", j.IdempotencyKey, plan)
	}

	noID := dup
	noID.ChannelTxnID, noID.RowFingerprint = "", "0123456789abcdef0123456789abcdef-2"
	j, err = compensate.Approved("acme", noID)
	if err != nil {
		t.Fatal(err)
	}
	if j.IdempotencyKey != "reversal-row/acme/0123456789abcdef0123456789abcdef-2" || j.Row != "row:0123456789abcdef0123456789abcdef-2" {
		t.Errorf("row without a channel id: key %q, row %q", j.IdempotencyKey, j.Row)
	}

	for _, c := range []reconcile.Category{reconcile.AmountMismatch, reconcile.MissingChannel, reconcile.DuplicateVanished} {
		f := dup
		f.Category = c
		if _, err := compensate.Approved("acme", f); err == nil {
			t.Errorf("%s approved: got a journal, want none", c)
		}
	}
}

// TestDecided: only an approval of a duplicate posts a journal, the one
// Approved gives; every other decision, and an approval of any other
// finding, posts none.
func TestDecided(t *testing.T) {
	dup := reconcile.Finding{Category: reconcile.DuplicateRefund, Kind: reconcile.KindRefund, OrderNo: "O1", RefundNo: "R1",
		ChannelTxnID: "T9", HasChannel: true, ChannelAmount: 250, Currency: "USD"}
	missing := dup
	missing.Category = reconcile.MissingLocal
	noRow := dup
	noRow.HasChannel = false
	for _, tt := range []struct {
		name    string
		f       reconcile.Finding
		state   reconcile.State
		wantKey string // "": no journal
		wantErr bool
	}{
		{"approved duplicate", dup, reconcile.StateApproved, "reversal/acme/T9", false},
		{"rejected duplicate", dup, reconcile.StateRejected, "", false},
		{"duplicate under investigation", dup, reconcile.StateInvestigating, "", false},
		{"approved missing_local", missing, reconcile.StateApproved, "", false},
		{"approved duplicate without a channel row", noRow, reconcile.StateApproved, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j, err := compensate.Decided("acme", tt.f, tt.state)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err: got %v, want error %v", err, tt.wantErr)
			}
			got := ""
			if j != nil {
				got = j.IdempotencyKey
			}
			if got != tt.wantKey {
				t.Errorf("journal key: got %q, want %q", got, tt.wantKey)
			}
		})
	}
}
