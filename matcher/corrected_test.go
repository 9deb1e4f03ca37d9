package matcher_test

import (
	"fmt"
	"testing"

	"reconcile"
	"reconcile/matcher"
)

// TestCorrectedFileKeepsTheReversedDuplicate: an earlier run of the date
// reversed T2 as the duplicate of T1. A corrected file dates the rows anew
// so that T2 comes first: T2 stays the duplicate (its journal is already
// posted) and T1 is not reversed too, which would undo a payment that
// really happened. A corrected file whose only row of the key is T2 puts
// the standing reversal in front of a person.
func TestCorrectedFileKeepsTheReversedDuplicate(t *testing.T) {
	reversed := reconcile.Finding{Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment, OrderNo: "O1",
		ChannelTxnID: "T2", HasChannel: true, ChannelAmount: 100, Currency: "CNY", AutoReverse: true}
	locals := []reconcile.LocalRecord{order("O1", "PAID", 100, "10:00")}
	for _, tt := range []struct {
		name string
		rows []reconcile.Transaction
		want []brief
	}{
		{"as it was", []reconcile.Transaction{pay("O1", "T1", 100, "10:00"), pay("O1", "T2", 100, "10:05")},
			[]brief{{reconcile.DuplicatePayment, "T2O1", true}}},
		{"dated anew, T2 first", []reconcile.Transaction{pay("O1", "T1", 100, "10:10"), pay("O1", "T2", 100, "10:05")},
			[]brief{{reconcile.DuplicatePayment, "T2O1", true}}},
		{"T2 alone", []reconcile.Transaction{pay("O1", "T2", 100, "10:05")},
			[]brief{{reconcile.DuplicateVanished, "T2O1", false}}},
		{"T2 gone", []reconcile.Transaction{pay("O1", "T1", 100, "10:00")},
			[]brief{{reconcile.DuplicateVanished, "T2O1", false}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := runWith(matcher.Options{}, tt.rows, nil, locals, reversed)
			if got := briefs(res.Findings); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("findings: got %+v, want %+v", got, tt.want)
			}
			for _, f := range res.Findings {
				if f.AutoReverse && f.ChannelTxnID != "T2" {
					t.Errorf("a second row of O1 reversed: %+v", f)
				}
			}
		})
	}
}
