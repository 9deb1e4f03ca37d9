package matcher_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"reconcile"
	"reconcile/matcher"
)

// Rule 14: chargebacks. Order O1 was paid 100 (channel id TO1); the
// customer's bank disputed it (dispute D1).

func dispute(kind reconcile.Kind, order, id string, amount int64, at string) reconcile.Transaction {
	return reconcile.Transaction{Kind: kind, OrderNo: order, ChannelTxnID: "CB-" + id + "-" + string(kind), DisputeID: id,
		PaymentID: "TO1", Amount: amount, Currency: "CNY", OccurredAt: when(at), Status: reconcile.StatusSuccess, FeeMilli: 1_500_000,
		Reason: "fraudulent"}
}

func cb(order, id string, amount int64, at string) reconcile.Transaction {
	return dispute(reconcile.KindChargeback, order, id, amount, at)
}

func reversal(order, id string, amount int64, at string) reconcile.Transaction {
	return dispute(reconcile.KindChargebackReversal, order, id, amount, at)
}

// own is tx without a dispute id of its own, as Adyen's rows without a
// Dispute Reference are: its channel id stands for one.
func own(tx reconcile.Transaction) reconcile.Transaction {
	tx.DisputeID = tx.ChannelTxnID
	return tx
}

// only returns the findings of the category.
func only(c matcher.Classification, cat reconcile.Category) []reconcile.Finding {
	var out []reconcile.Finding
	for _, f := range c.Findings {
		if f.Category == cat {
			out = append(out, f)
		}
	}
	return out
}

func TestChargebackAndRefundOfOneOrder(t *testing.T) {
	o1 := paidOrder("O1", 100, "2026-11-26 09:00:00.000")
	r1 := paidRefund("O1", "R1", 100, "2026-11-27 10:00:00.000")
	tests := []struct {
		name string
		n    night
		over bool   // an over_refund of O1 is told
		cb   string // the chargeback finding's dispute status, "" for none
	}{
		{
			name: "refunded on an earlier night, charged back tonight",
			n:    night{date: "2026-11-28", rows: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-28 11:00:00.000")}, orders: []reconcile.LocalRecord{o1}, refunds: []reconcile.LocalRecord{r1}},
			over: true, cb: reconcile.DisputeOpen,
		},
		{
			name: "charged back on an earlier night, refunded tonight",
			n: night{date: "2026-11-28", rows: []reconcile.Transaction{rowOf(paidRefund("O1", "R1", 100, "2026-11-28 10:00:00.000"))},
				orders: []reconcile.LocalRecord{o1}, refunds: []reconcile.LocalRecord{paidRefund("O1", "R1", 100, "2026-11-28 10:00:00.000")},
				events: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-27 11:00:00.000")}},
			over: true,
		},
		{
			name: "refund and chargeback the same night",
			n: night{date: "2026-11-28", rows: []reconcile.Transaction{rowOf(paidRefund("O1", "R1", 100, "2026-11-28 10:00:00.000")), cb("O1", "D1", 100, "2026-11-28 11:00:00.000")},
				orders: []reconcile.LocalRecord{o1}, refunds: []reconcile.LocalRecord{paidRefund("O1", "R1", 100, "2026-11-28 10:00:00.000")}},
			over: true, cb: reconcile.DisputeOpen,
		},
		{
			name: "a chargeback alone is no over-refund",
			n:    night{date: "2026-11-28", rows: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-28 11:00:00.000")}, orders: []reconcile.LocalRecord{o1}},
			cb:   reconcile.DisputeOpen,
		},
		{
			name: "a partial refund and a partial chargeback within what was paid",
			n: night{date: "2026-11-28", rows: []reconcile.Transaction{cb("O1", "D1", 40, "2026-11-28 11:00:00.000")}, orders: []reconcile.LocalRecord{o1},
				refunds: []reconcile.LocalRecord{paidRefund("O1", "R1", 60, "2026-11-27 10:00:00.000")}},
			cb: reconcile.DisputeOpen,
		},
		{
			name: "charged back and reversed tonight: won, the refund alone counts",
			n: night{date: "2026-11-28", rows: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-28 11:00:00.000"), reversal("O1", "D1", 100, "2026-11-28 15:00:00.000")},
				orders: []reconcile.LocalRecord{o1}, refunds: []reconcile.LocalRecord{r1}},
			cb: reconcile.DisputeWon,
		},
		{
			name: "the chargeback an earlier night told, again in tonight's file: told once",
			n: night{date: "2026-11-28", rows: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-27 11:00:00.000")}, orders: []reconcile.LocalRecord{o1},
				refunds: []reconcile.LocalRecord{r1}, events: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-27 11:00:00.000")},
				reported: 200},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.n.classify(t)
			over := only(c, reconcile.OverRefund)
			if (len(over) == 1) != tt.over || len(over) > 1 {
				t.Fatalf("over_refund findings: %+v, want one: %v", over, tt.over)
			}
			if tt.over {
				f := over[0]
				if f.DisputeID() != "D1" || f.AtRisk() != 100 || !strings.Contains(f.Hint, "1 refund and 1 chargeback") {
					t.Errorf("over_refund: dispute %q, at risk %d, hint %q; want D1, 100, both doors named", f.DisputeID(), f.AtRisk(), f.Hint)
				}
				if len(f.Related) != 2 || !strings.Contains(strings.Join(f.Related, "|"), "chargeback D1") {
					t.Errorf("over_refund names %q, want the refund and the chargeback", f.Related)
				}
			}
			cbs := only(c, reconcile.Chargeback)
			if (len(cbs) == 1) != (tt.cb != "") || len(cbs) > 1 {
				t.Fatalf("chargeback findings: %+v, want one: %v", cbs, tt.cb != "")
			}
			if tt.cb != "" {
				f := cbs[0]
				if f.DisputeStatus() != tt.cb || f.DisputeID() != "D1" || f.OrderNo != "O1" || f.FeeMilli != 1_500_000 || f.Dispute.Reason != "fraudulent" ||
					(f.AtRisk() != f.ChannelAmount) != (tt.cb == reconcile.DisputeWon) || !f.NeedsReview() || !f.HasLocal || f.LocalAmount != 100 {
					t.Errorf("chargeback: %+v", f)
				}
			}
			if n := len(c.Findings) - len(over) - len(cbs); n != 0 {
				t.Errorf("%d findings besides: %+v", n, c.Findings)
			}
		})
	}
}

func TestDisputeAcrossNights(t *testing.T) {
	o1 := paidOrder("O1", 100, "2026-11-26 09:00:00.000")
	earlierCB := cb("O1", "D1", 100, "2026-11-27 11:00:00.000")
	tests := []struct {
		name     string
		rows     []reconcile.Transaction
		events   []reconcile.Transaction
		linked   string // the dispute tonight's events are kept under, "" for none kept
		mismatch string // a phrase of a dispute_mismatch's hint, "" for none
	}{
		{name: "won tonight", rows: []reconcile.Transaction{reversal("O1", "D1", 100, "2026-11-28 09:00:00.000")},
			events: []reconcile.Transaction{earlierCB}, linked: "D1"},
		{name: "lost for good tonight", events: []reconcile.Transaction{earlierCB, reversal("O1", "D1", 100, "2026-11-27 15:00:00.000")},
			rows: []reconcile.Transaction{dispute(reconcile.KindSecondChargeback, "O1", "D1", 100, "2026-11-28 09:00:00.000")}, linked: "D1"},
		{name: "a reversal without a dispute id of its own goes to the order's one dispute", events: []reconcile.Transaction{earlierCB},
			rows: []reconcile.Transaction{own(reversal("O1", "D9", 100, "2026-11-28 09:00:00.000"))}, linked: "D1"},
		{name: "a reversal of another dispute is not the order's other one's", events: []reconcile.Transaction{earlierCB},
			rows: []reconcile.Transaction{reversal("O1", "D9", 100, "2026-11-28 09:00:00.000")}, linked: "D9", mismatch: "no chargeback of its dispute is known"},
		{name: "a reversal of no chargeback", rows: []reconcile.Transaction{reversal("O1", "D1", 100, "2026-11-28 09:00:00.000")},
			mismatch: "no chargeback of its dispute is known", linked: "D1"},
		{name: "a reversal of more than was charged back", events: []reconcile.Transaction{earlierCB},
			rows: []reconcile.Transaction{reversal("O1", "D1", 150, "2026-11-28 09:00:00.000")}, linked: "D1",
			mismatch: "give back more than its chargebacks took (1.00 CNY"},
		{name: "a reversal an earlier night already counted", events: []reconcile.Transaction{earlierCB, reversal("O1", "D1", 100, "2026-11-27 15:00:00.000")},
			rows: []reconcile.Transaction{reversal("O1", "D1", 100, "2026-11-27 15:00:00.000")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := night{date: "2026-11-28", rows: tt.rows, orders: []reconcile.LocalRecord{o1}, events: tt.events}.classify(t)
			if n := len(c.DisputeEvents); (n == 1) != (tt.linked != "") || n > 1 || n == 1 && c.DisputeEvents[0].DisputeID != tt.linked {
				t.Errorf("events to keep: %+v, want one under %q", c.DisputeEvents, tt.linked)
			}
			if cbs := only(c, reconcile.Chargeback); len(cbs) != 0 {
				t.Errorf("a chargeback an earlier night told is told again: %+v", cbs)
			}
			mm := only(c, reconcile.DisputeMismatch)
			if (len(mm) > 0) != (tt.mismatch != "") || len(mm) > 0 && !strings.Contains(mm[0].Hint, tt.mismatch) {
				t.Errorf("dispute_mismatch: %+v, want one saying %q", mm, tt.mismatch)
			}
			if over := only(c, reconcile.OverRefund); len(over) != 0 {
				t.Errorf("over_refund: %+v", over)
			}
		})
	}
}

// A second chargeback after a won round takes the money again: an order
// refunded in full is over-refunded anew that night.
func TestSecondChargebackTakesAgain(t *testing.T) {
	n := night{date: "2026-11-28", orders: []reconcile.LocalRecord{paidOrder("O1", 100, "2026-11-26 09:00:00.000")},
		refunds: []reconcile.LocalRecord{paidRefund("O1", "R1", 100, "2026-11-26 10:00:00.000")},
		events:  []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-27 11:00:00.000"), reversal("O1", "D1", 100, "2026-11-27 15:00:00.000")},
		rows:    []reconcile.Transaction{dispute(reconcile.KindSecondChargeback, "O1", "D1", 100, "2026-11-28 09:00:00.000")},
		// the earlier night's chargeback told an over_refund of 200
		reported: 200,
	}
	c := n.classify(t)
	if over := only(c, reconcile.OverRefund); len(over) != 1 || over[0].ChannelAmount != 200 || over[0].Kind != reconcile.KindChargeback {
		t.Errorf("over_refund: %+v, want one of 200 named by the second chargeback", over)
	}
}

// TestChargebacksAloneOfAnOrder: an order no refund touched is told by
// rule 8 only when its chargebacks took more than it was paid, or took
// it in another currency; within what was paid, its dispute's finding
// is its case.
func TestChargebacksAloneOfAnOrder(t *testing.T) {
	o1 := paidOrder("O1", 100, "2026-11-26 09:00:00.000")
	usd := cb("O1", "D1", 100, "2026-11-28 11:00:00.000")
	usd.Currency = "USD"
	tests := []struct {
		name string
		rows []reconcile.Transaction
		want []reconcile.Category // besides the chargeback
	}{
		{"within what was paid", []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-28 11:00:00.000")}, nil},
		{"more than was paid", []reconcile.Transaction{cb("O1", "D1", 120, "2026-11-28 11:00:00.000")},
			[]reconcile.Category{reconcile.OverRefund}},
		{"two disputes, more than was paid together", []reconcile.Transaction{cb("O1", "D1", 60, "2026-11-28 11:00:00.000"),
			cb("O1", "D2", 60, "2026-11-28 12:00:00.000")}, []reconcile.Category{reconcile.OverRefund}},
		{"a second chargeback on top", []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-28 11:00:00.000"),
			dispute(reconcile.KindSecondChargeback, "O1", "D1", 100, "2026-11-28 15:00:00.000")}, []reconcile.Category{reconcile.OverRefund}},
		{"in another currency", []reconcile.Transaction{usd}, []reconcile.Category{reconcile.RefundCurrencyMismatch}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := night{date: "2026-11-28", rows: tt.rows, orders: []reconcile.LocalRecord{o1}}.classify(t)
			var got []reconcile.Category
			for _, f := range c.Findings {
				if f.Category != reconcile.Chargeback {
					got = append(got, f.Category)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings besides the chargebacks: %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChargebackPlacedByPaymentID(t *testing.T) {
	o1 := paidOrder("O1", 100, "2026-11-26 09:00:00.000")
	placed := cb("", "D1", 100, "2026-11-28 11:00:00.000")
	lost := cb("", "D2", 70, "2026-11-28 12:00:00.000")
	lost.PaymentID = "pi_unknown"
	c := night{date: "2026-11-28", orders: []reconcile.LocalRecord{o1}, rows: []reconcile.Transaction{placed, lost},
		refunds: []reconcile.LocalRecord{paidRefund("O1", "R1", 100, "2026-11-27 10:00:00.000")}}.classify(t)
	cbs := only(c, reconcile.Chargeback)
	if len(cbs) != 2 || cbs[0].OrderNo != "" || cbs[0].DisputeID() != "D2" || cbs[1].OrderNo != "O1" {
		t.Fatalf("chargebacks: %+v, want D2 on no order and D1 on O1", cbs)
	}
	if !strings.Contains(cbs[0].Hint, "payment id pi_unknown") || !strings.Contains(cbs[0].Hint, "cannot place") {
		t.Errorf("the unplaced chargeback's hint: %q", cbs[0].Hint)
	}
	if over := only(c, reconcile.OverRefund); len(over) != 1 || over[0].OrderNo != "O1" {
		t.Errorf("over_refund: %+v, want O1's", over)
	}
}

// Rule 14: a duplicate of an order with a chargeback is not reversed by
// itself, whether the chargeback is tonight's or still stands from an
// earlier night; once reversed (won), it no longer holds the duplicate.
func TestNoAutomaticReversalWhileDisputed(t *testing.T) {
	o1 := paidOrder("O1", 100, "2026-11-28 09:00:00.000")
	dup := []reconcile.Transaction{rowOf(o1), pay("O1", "T2", 100, "09:05")}
	dup[1].OccurredAt = when("2026-11-28 09:05:00.000")
	tests := []struct {
		name   string
		rows   []reconcile.Transaction
		events []reconcile.Transaction
		auto   bool
	}{
		{name: "no dispute", rows: dup, auto: true},
		{name: "charged back tonight", rows: append(dup[:2:2], cb("O1", "D1", 100, "2026-11-28 12:00:00.000"))},
		{name: "charged back on an earlier night", rows: dup, events: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-27 12:00:00.000")}},
		{name: "charged back and won on earlier nights", rows: dup, auto: true,
			events: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-27 12:00:00.000"), reversal("O1", "D1", 100, "2026-11-27 18:00:00.000")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := night{date: "2026-11-28", rows: tt.rows, orders: []reconcile.LocalRecord{o1}, events: tt.events}.classify(t)
			d := only(c, reconcile.DuplicatePayment)
			if len(d) != 1 || d[0].AutoReverse != tt.auto {
				t.Fatalf("duplicates: %+v, want one, automatic %v", d, tt.auto)
			}
			if !tt.auto && !strings.Contains(d[0].Hint, "has a chargeback (dispute D1)") {
				t.Errorf("hint %q does not say why", d[0].Hint)
			}
		})
	}
}

// A refund that bounced is told, and no longer counts in its order's
// money returned.
func TestRefundReversed(t *testing.T) {
	back := reconcile.Transaction{Kind: reconcile.KindRefundReversal, OrderNo: "O1", RefundNo: "R1", ChannelTxnID: "RR1", PaymentID: "TO1",
		Amount: 100, Currency: "CNY", OccurredAt: when("2026-11-28 09:00:00.000"), Status: reconcile.StatusSuccess}
	c := night{date: "2026-11-28", orders: []reconcile.LocalRecord{paidOrder("O1", 100, "2026-11-26 09:00:00.000")},
		refunds: []reconcile.LocalRecord{paidRefund("O1", "R1", 100, "2026-11-27 10:00:00.000")},
		rows:    []reconcile.Transaction{back, cb("O1", "D1", 100, "2026-11-28 11:00:00.000")}}.classify(t)
	rr := only(c, reconcile.RefundReversed)
	if len(rr) != 1 || rr[0].RefundNo != "R1" || !rr[0].HasLocal || rr[0].LocalStatus != reconcile.RefundSucceeded {
		t.Errorf("refund_reversed: %+v", rr)
	}
	if over := only(c, reconcile.OverRefund); len(over) != 0 {
		t.Errorf("the bounced refund still counts: %+v", over)
	}
}

// A chargeback's fee is checked against the contract's dispute_fee.
func TestDisputeFee(t *testing.T) {
	fixed := func(v string) *reconcile.FeeTerms {
		return &reconcile.FeeTerms{Fixed: v, Places: -1, Rounding: reconcile.RoundHalfUp}
	}
	for _, tt := range []struct {
		name     string
		contract *reconcile.FeeContract
		want     int
	}{
		{"the contract's fee", &reconcile.FeeContract{Dispute: fixed("15.00")}, 0},
		{"another fee", &reconcile.FeeContract{Dispute: fixed("20.00")}, 1},
		{"within the tolerance", &reconcile.FeeContract{Dispute: fixed("15.01"), Tolerance: 1}, 0},
		{"no dispute_fee in the contract", &reconcile.FeeContract{Payment: fixed("0.30")}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := night{date: "2026-11-28", opts: matcher.Options{Fees: tt.contract},
				rows:   []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-28 11:00:00.000"), reversal("O1", "D1", 100, "2026-11-28 15:00:00.000")},
				orders: []reconcile.LocalRecord{paidOrder("O1", 100, "2026-11-26 09:00:00.000")}}.classify(t)
			fm := only(c, reconcile.FeeMismatch)
			if len(fm) != tt.want {
				t.Fatalf("fee_mismatch: %+v, want %d", fm, tt.want)
			}
			if tt.want == 1 && (fm[0].ExpectedFeeMilli != 2_000_000 || fm[0].AtRisk() != 500 || !strings.Contains(fm[0].Hint, "chargeback of order O1 (dispute D1)")) {
				t.Errorf("fee_mismatch: %+v", fm[0])
			}
		})
	}
}

// Where the merchant records disputes, a chargeback it has no record of,
// and a recorded dispute no file charged back within its window, are
// told; without the records nothing of the kind is asked.
func TestRecordedDisputes(t *testing.T) {
	o1 := paidOrder("O1", 100, "2026-11-26 09:00:00.000")
	rec := func(id string) reconcile.Dispute {
		return reconcile.Dispute{ID: id, OrderNo: "O1", Amount: 100, Currency: "CNY", Status: "needs_response", OpenedAt: when("2026-11-21 08:00:00.000")}
	}
	tests := []struct {
		name     string
		recorded map[string]reconcile.Dispute
		overdue  []reconcile.Dispute
		rows     []reconcile.Transaction
		want     []reconcile.Category // besides the chargebacks
	}{
		{name: "no records kept", rows: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-28 11:00:00.000")}},
		{name: "recorded", recorded: map[string]reconcile.Dispute{"D1": rec("D1")}, rows: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-28 11:00:00.000")}},
		{name: "not recorded", recorded: map[string]reconcile.Dispute{}, rows: []reconcile.Transaction{cb("O1", "D1", 100, "2026-11-28 11:00:00.000")},
			want: []reconcile.Category{reconcile.MissingLocal}},
		{name: "recorded, overdue", recorded: map[string]reconcile.Dispute{}, overdue: []reconcile.Dispute{rec("D7")},
			want: []reconcile.Category{reconcile.MissingChannel}},
		{name: "recorded, charged back on its last night", recorded: map[string]reconcile.Dispute{"D7": rec("D7")}, overdue: []reconcile.Dispute{rec("D7")},
			rows: []reconcile.Transaction{cb("O1", "D7", 100, "2026-11-28 11:00:00.000")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := night{date: "2026-11-28", rows: tt.rows, orders: []reconcile.LocalRecord{o1}, recorded: tt.recorded, overdue: tt.overdue}.classify(t)
			var got []reconcile.Category
			for _, f := range c.Findings {
				if f.Category != reconcile.Chargeback {
					got = append(got, f.Category)
					// the missing record of a chargeback is not money of its own
					risk := map[reconcile.Category]int64{reconcile.MissingLocal: 0, reconcile.MissingChannel: 100}[f.Category]
					if f.Kind != reconcile.KindChargeback || f.DisputeID() == "" || f.AtRisk() != risk {
						t.Errorf("%+v", f)
					}
				}
			}
			if strings.Join(catNames(got), ",") != strings.Join(catNames(tt.want), ",") {
				t.Errorf("findings %v, want %v", got, tt.want)
			}
		})
	}
}

func catNames(cs []reconcile.Category) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c))
	}
	return out
}

// Adyen's reports without a Dispute Reference give a dispute's every
// event a reference of its own: its reversal and second chargeback go to
// the order's one dispute. Charged back, won, then lost: one chargeback,
// lost, and no more returned than was paid.
func TestDisputeEventsUnderTheirOwnIDs(t *testing.T) {
	c := night{date: "2026-11-28", orders: []reconcile.LocalRecord{paidOrder("O1", 100, "2026-11-26 09:00:00.000")},
		rows: []reconcile.Transaction{own(cb("O1", "M1", 100, "2026-11-28 08:00:00.000")), own(reversal("O1", "M2", 100, "2026-11-28 13:00:00.000")),
			own(dispute(reconcile.KindSecondChargeback, "O1", "M3", 100, "2026-11-28 18:00:00.000"))}}.classify(t)
	cbs := only(c, reconcile.Chargeback)
	m1 := "CB-M1-chargeback"
	if len(c.Findings) != 1 || len(cbs) != 1 || cbs[0].DisputeStatus() != reconcile.DisputeLost || cbs[0].DisputeID() != m1 || len(cbs[0].Related) != 2 {
		t.Errorf("findings: %+v; want one chargeback %s, lost, naming its two later events", c.Findings, m1)
	}
	for _, e := range c.DisputeEvents {
		if e.DisputeID != m1 {
			t.Errorf("event kept under %q, want %s, so later nights link it too", e.DisputeID, m1)
		}
	}
}

// RepeatedOrders are the orders whose duplicates may wait on a
// chargeback: keys with more than one row, tonight's or earlier nights'.
func TestRepeatedOrders(t *testing.T) {
	m := matcher.New(day, matcher.Options{})
	for _, r := range []reconcile.Transaction{pay("O1", "T1", 100, "09:00"), pay("O1", "T1b", 100, "09:05"), pay("O2", "T2", 100, "09:00"),
		refund("O3", "R3", "RT3", 50, "10:00"), refund("O3", "R3", "RT3b", 50, "10:05"), pay("O4", "T4", 100, "11:00")} {
		m.AddRow(r)
	}
	m.AddEarlier(pay("O4", "T4a", 100, "08:00"))
	if got := strings.Join(m.RepeatedOrders(), ","); got != "O1,O3,O4" {
		t.Errorf("RepeatedOrders: %s, want O1,O3,O4", got)
	}
}

// A dispute's event the file says did not complete moved no money: it is
// kept aside for a person, counted nowhere, kept for no later night.
func TestUncompletedDisputeEvent(t *testing.T) {
	failed := cb("O1", "D1", 100, "2026-11-28 11:00:00.000")
	failed.Status = reconcile.StatusFailed
	c := night{date: "2026-11-28", rows: []reconcile.Transaction{failed}, orders: []reconcile.LocalRecord{paidOrder("O1", 100, "2026-11-26 09:00:00.000")},
		refunds: []reconcile.LocalRecord{paidRefund("O1", "R1", 100, "2026-11-27 10:00:00.000")}}.classify(t)
	if len(c.Findings) != 1 || c.Findings[0].Category != reconcile.Unrecognized || len(c.DisputeEvents) != 0 {
		t.Errorf("findings %+v, events %+v; want the row unrecognized, nothing kept", c.Findings, c.DisputeEvents)
	}
}

// An event is the same event however it was linked: Adyen's second
// chargeback, kept the night before under the order's one dispute, again
// in tonight's file beside a new dispute of the order, is not new money.
func TestRepeatedEventRelinked(t *testing.T) {
	first := own(cb("O1", "M1", 100, "2026-11-26 08:00:00.000"))
	back := own(reversal("O1", "M2", 100, "2026-11-26 13:00:00.000"))
	second := own(dispute(reconcile.KindSecondChargeback, "O1", "M3", 100, "2026-11-27 08:00:00.000"))
	kept := second
	kept.DisputeID = first.DisputeID // as the ledger kept it
	back.DisputeID = first.DisputeID
	newOne := own(cb("O1", "M5", 10, "2026-11-28 08:00:00.000"))
	c := night{date: "2026-11-28", orders: []reconcile.LocalRecord{paidOrder("O1", 200, "2026-11-25 09:00:00.000")},
		events: []reconcile.Transaction{first, back, kept}, rows: []reconcile.Transaction{second, newOne}}.classify(t)
	if len(c.DisputeEvents) != 1 || c.DisputeEvents[0].ChannelTxnID != newOne.ChannelTxnID {
		t.Errorf("events kept: %+v, want the new chargeback alone", c.DisputeEvents)
	}
	for _, f := range c.Findings {
		if f.Category != reconcile.Chargeback || f.ChannelTxnID != newOne.ChannelTxnID {
			t.Errorf("finding %s %s %s: want only the new chargeback", f.Category, f.ChannelTxnID, f.Hint)
		}
	}
}

// A refund reversal that names neither our refund number nor the
// refund's id (Adyen's, under a reference of its own) gives back the one
// refund of its amount.
func TestRefundReversalByAmount(t *testing.T) {
	back := reconcile.Transaction{Kind: reconcile.KindRefundReversal, OrderNo: "O1", ChannelTxnID: "RR9", PaymentID: "TO1",
		Amount: 60, Currency: "CNY", OccurredAt: when("2026-11-28 09:00:00.000"), Status: reconcile.StatusSuccess}
	n := night{date: "2026-11-28", orders: []reconcile.LocalRecord{paidOrder("O1", 100, "2026-11-26 09:00:00.000")},
		refunds: []reconcile.LocalRecord{paidRefund("O1", "R1", 60, "2026-11-27 10:00:00.000"), paidRefund("O1", "R2", 40, "2026-11-27 11:00:00.000")},
		rows:    []reconcile.Transaction{back, cb("O1", "D1", 60, "2026-11-28 11:00:00.000")}}
	c := n.classify(t)
	if rr := only(c, reconcile.RefundReversed); len(rr) != 1 || rr[0].RefundNo != "R1" || !rr[0].HasLocal {
		t.Errorf("refund_reversed: %+v, want R1's", rr)
	}
	if over := only(c, reconcile.OverRefund); len(over) != 0 {
		t.Errorf("R1 bounced, 40 + 60 is what was paid: %+v", over)
	}
	// Two refunds of its amount: none is certain, both still count.
	n.refunds[1].Amount = 60
	if over := only(n.classify(t), reconcile.OverRefund); len(over) != 1 {
		t.Errorf("with two refunds of 60, the reversal takes neither out: %+v", over)
	}
}

// Of four shards, each takes the events that name no order until their
// order is found; the order's shard alone tells a placed one, the first
// shard alone one nothing places or that did not complete.
func TestDisputesAcrossShards(t *testing.T) {
	placed := cb("", "D1", 100, "2026-11-28 11:00:00.000") // payment TO1: order O1
	lost := cb("", "D2", 70, "2026-11-28 12:00:00.000")
	lost.PaymentID = "pi_unknown"
	failed := cb("", "D3", 50, "2026-11-28 13:00:00.000")
	failed.Status = reconcile.StatusFailed
	owner := reconcile.ShardOf("O1", 4)
	told := map[string][]int{}
	for s := range 4 {
		in := matcher.NewIntake(day, matcher.Options{Shard: reconcile.Shard{Index: s, Count: 4}})
		for _, r := range []reconcile.Transaction{placed, lost, failed} {
			in.Row(r)
		}
		in.FileRead()
		var owners []reconcile.LocalRecord
		if slices.Contains(in.UnplacedDisputes(), "TO1") {
			owners = append(owners, reconcile.LocalRecord{Kind: reconcile.KindPayment, OrderNo: "O1", ChannelTxnID: "TO1"})
		}
		in.PlaceDisputes(owners)
		m, _, err := in.Finish(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Classify(matcher.Known{}).Findings {
			told[string(f.Category)+" "+f.ChannelTxnID] = append(told[string(f.Category)+" "+f.ChannelTxnID], s)
		}
	}
	want := map[string][]int{
		"chargeback " + placed.ChannelTxnID:   {owner},
		"chargeback " + lost.ChannelTxnID:     {0},
		"unrecognized " + failed.ChannelTxnID: {0},
	}
	if !reflect.DeepEqual(told, want) {
		t.Errorf("told by shards %v, want %v", told, want)
	}
}
