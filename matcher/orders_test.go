package matcher_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"reconcile"
	"reconcile/matcher"
	"reconcile/matcher/memory"
)

// Rule 13: rows under one refund number that name different orders are
// never one refund, and a refund row on another order than ours is never
// matched. Our refund R9 is of order O1, and the channel's id of it RF1.
func TestRowsOnAnotherOrder(t *testing.T) {
	ours := func(id string) reconcile.LocalRecord {
		r := localRefund("O1", "R9", "SUCCEEDED", 100, "10:00")
		r.ChannelTxnID = id
		return r
	}
	tests := []struct {
		name    string
		rows    []reconcile.Transaction
		locals  []reconcile.LocalRecord
		want    []brief
		matched int
		hint    string // a phrase the first finding's hint must contain
	}{
		{
			name:    "our row first, another order's after it",
			rows:    []reconcile.Transaction{refund("O1", "R9", "RF1", 100, "10:00"), refund("O2", "R9", "RF2", 100, "11:00")},
			locals:  []reconcile.LocalRecord{ours("RF1")},
			want:    []brief{{reconcile.OrderMismatch, "RF2R9", false}},
			matched: 1,
			hint:    "on order O2, but our refund R9 is of order O1",
		},
		{
			name:    "another order's row first: ours is still the original",
			rows:    []reconcile.Transaction{refund("O2", "R9", "RF2", 100, "09:00"), refund("O1", "R9", "RF1", 100, "10:00")},
			locals:  []reconcile.LocalRecord{ours("RF1")},
			want:    []brief{{reconcile.OrderMismatch, "RF2R9", false}},
			matched: 1,
		},
		{
			name:    "another order's row first, our record without a channel id",
			rows:    []reconcile.Transaction{refund("O2", "R9", "RF2", 100, "09:00"), refund("O1", "R9", "RF1", 100, "10:00")},
			locals:  []reconcile.LocalRecord{ours("")},
			want:    []brief{{reconcile.OrderMismatch, "RF2R9", false}},
			matched: 1,
		},
		{
			name:   "the only row is on another order",
			rows:   []reconcile.Transaction{refund("O2", "R9", "RF2", 100, "10:00")},
			locals: []reconcile.LocalRecord{ours("RF1")},
			want:   []brief{{reconcile.OrderMismatch, "RF2R9", false}},
		},
		{
			name:   "the only row is on another order, for another amount",
			rows:   []reconcile.Transaction{refund("O2", "R9", "RF2", 250, "10:00")},
			locals: []reconcile.LocalRecord{ours("")},
			want:   []brief{{reconcile.OrderMismatch, "RF2R9", false}},
		},
		{
			name: "a duplicate beside a row on another order is not reversed",
			rows: []reconcile.Transaction{
				refund("O1", "R9", "RF1", 100, "10:00"), refund("O1", "R9", "RF3", 100, "10:05"), refund("O2", "R9", "RF2", 100, "10:10"),
			},
			locals:  []reconcile.LocalRecord{ours("RF1")},
			want:    []brief{{reconcile.DuplicateRefund, "RF3R9", false}, {reconcile.OrderMismatch, "RF2R9", false}},
			matched: 1,
			hint:    "the rows name different orders (O1, O2)",
		},
		{
			name:    "the row our record names is the original whatever the times say",
			rows:    []reconcile.Transaction{refund("O1", "R9", "RF3", 100, "09:00"), refund("O1", "R9", "RF1", 100, "10:00")},
			locals:  []reconcile.LocalRecord{ours("RF1")},
			want:    []brief{{reconcile.DuplicateRefund, "RF3R9", true}},
			matched: 1,
		},
		{
			name:    "a row without an order does not disagree",
			rows:    []reconcile.Transaction{refund("", "R9", "RF1", 100, "10:00")},
			locals:  []reconcile.LocalRecord{ours("RF1")},
			matched: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(tt.rows, tt.locals)
			if inter := runInterleaved(tt.rows, tt.locals); !reflect.DeepEqual(inter, res) {
				t.Errorf("records streamed beside the rows: got %+v, want what one after the other gives, %+v", inter, res)
			}
			if got := briefs(res.Findings); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("findings: got %+v, want %+v", got, tt.want)
			}
			if got := res.Counts[reconcile.Matched]; got != tt.matched {
				t.Errorf("matched: got %d, want %d", got, tt.matched)
			}
			if tt.hint != "" && !strings.Contains(res.Findings[0].Hint, tt.hint) {
				t.Errorf("hint: got %q, want it to contain %q", res.Findings[0].Hint, tt.hint)
			}
			for _, f := range res.Findings {
				if f.Category != reconcile.OrderMismatch {
					continue
				}
				if f.AtRisk() != f.ChannelAmount {
					t.Errorf("%s: money at risk %d, want the row's amount %d", f.ChannelTxnID, f.AtRisk(), f.ChannelAmount)
				}
				if len(f.Related) != 1 || !strings.Contains(f.Related[0], "of order O1") {
					t.Errorf("%s: related %q, want it to name our order O1", f.ChannelTxnID, f.Related)
				}
			}
		})
	}
}

// A row our record names, new tonight, under a key an earlier night's
// file settled under another channel id: one of the two moved twice, and
// which one is not for the job to say.
func TestOurRowAfterAnEarlierNight(t *testing.T) {
	local := localRefund("O1", "R9", "SUCCEEDED", 100, "10:00")
	local.ChannelTxnID = "RF1"
	m := matcher.New(day, matcher.Options{})
	m.AddRow(refund("O1", "R9", "RF1", 100, "10:00"))
	m.AddLocal(local)
	earlier := refund("O1", "R9", "RF0", 100, "10:00")
	earlier.OccurredAt = earlier.OccurredAt.AddDate(0, 0, -1)
	m.AddEarlier(earlier)
	res := m.Classify(matcher.Known{})
	want := []brief{{reconcile.DuplicateRefund, "RF1R9", false}}
	if got := briefs(res.Findings); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings: got %+v, want %+v", got, want)
	}
	if h := res.Findings[0].Hint; !strings.Contains(h, "our record names this row's channel id") {
		t.Errorf("hint: got %q, want it to say our record names the row", h)
	}
}

// Rule 13 for payments: a payment row whose channel id our records hold
// under another order. Our order O1 was paid by T1; the channel's row
// says T1 paid O2.
func TestPaymentOnAnotherOrder(t *testing.T) {
	paid := func(no, id string) reconcile.LocalRecord {
		r := order(no, "PAID", 100, "09:00")
		r.ChannelTxnID = id
		return r
	}
	owners := []reconcile.LocalRecord{{Kind: reconcile.KindPayment, OrderNo: "O1", ChannelTxnID: "T1"}}
	tests := []struct {
		name    string
		opts    matcher.Options
		rows    []reconcile.Transaction
		locals  []reconcile.LocalRecord
		asked   []string // what PaymentIDs asks our records about
		want    []brief
		matched int
	}{
		{
			name:   "our record of O2 holds another id: matched no longer",
			rows:   []reconcile.Transaction{pay("O2", "T1", 100, "09:00")},
			locals: []reconcile.LocalRecord{paid("O2", "T2")},
			asked:  []string{"T1"},
			want:   []brief{{reconcile.OrderMismatch, "T1O2", false}},
		},
		{
			name:  "no record of O2 at all",
			rows:  []reconcile.Transaction{pay("O2", "T1", 100, "09:00")},
			asked: []string{"T1"},
			want:  []brief{{reconcile.OrderMismatch, "T1O2", false}},
		},
		{
			name:    "a duplicate whose id is O1's is not reversed",
			rows:    []reconcile.Transaction{pay("O2", "T2", 100, "09:00"), pay("O2", "T1", 100, "09:05"), pay("O2", "T3", 100, "09:10")},
			locals:  []reconcile.LocalRecord{paid("O2", "T2")},
			asked:   []string{"T1", "T2", "T3"},
			want:    []brief{{reconcile.DuplicatePayment, "T3O2", false}, {reconcile.OrderMismatch, "T1O2", false}},
			matched: 1,
		},
		{
			name:    "our record holds the row's id: nothing asked",
			rows:    []reconcile.Transaction{pay("O2", "T2", 100, "09:00")},
			locals:  []reconcile.LocalRecord{paid("O2", "T2")},
			matched: 1,
		},
		{
			name:    "another id, held by no other order: matched",
			rows:    []reconcile.Transaction{pay("O2", "T9", 100, "09:00")},
			locals:  []reconcile.LocalRecord{paid("O2", "T2")},
			asked:   []string{"T9"},
			matched: 1,
		},
		{
			name:    "a file whose ids are not ours (Stripe's): nothing asked",
			opts:    matcher.Options{ForeignIDs: true},
			rows:    []reconcile.Transaction{pay("O2", "txn_1", 100, "09:00")},
			locals:  []reconcile.LocalRecord{paid("O2", "pi_2")},
			matched: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := matcher.New(day, tt.opts)
			for _, r := range tt.rows {
				m.AddRow(r)
			}
			for _, l := range tt.locals {
				m.AddLocal(l)
			}
			asked := m.Questions().PaymentIDs
			if !reflect.DeepEqual(asked, tt.asked) {
				t.Errorf("asked about %q, want %q", asked, tt.asked)
			}
			var found []reconcile.LocalRecord
			for _, o := range owners {
				if slices.Contains(asked, o.ChannelTxnID) {
					found = append(found, o)
				}
			}
			res := m.Classify(matcher.Known{PaymentOwners: found})
			if got := briefs(res.Findings); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("findings: got %+v, want %+v", got, tt.want)
			}
			if got := res.Counts[reconcile.Matched]; got != tt.matched {
				t.Errorf("matched: got %d, want %d", got, tt.matched)
			}
			for _, f := range res.Findings {
				if f.Category == reconcile.OrderMismatch && !strings.Contains(f.Hint, "as the payment of order O1") {
					t.Errorf("hint %q: want it to name order O1", f.Hint)
				}
				if f.Category == reconcile.DuplicatePayment && !strings.Contains(f.Hint, `channel id "T1" is our record of another order's payment`) {
					t.Errorf("duplicate's hint %q: want it to say why it is not reversed", f.Hint)
				}
			}
		})
	}
}

// A duplicate is reversed by itself only when one of its key's rows is
// the movement our record names, where the file's ids are the ones our
// records keep; an earlier night's row, known by its id's hash, counts.
func TestOurChannelIDInTheGroup(t *testing.T) {
	ours := order("O1", "PAID", 100, "09:00")
	ours.ChannelTxnID = "T1"
	yesterday := day.Start().AddDate(0, 0, -1)
	earlierRow := func(id string) reconcile.Transaction {
		tx := pay("O1", id, 100, "09:00")
		tx.OccurredAt = tx.OccurredAt.AddDate(0, 0, -1)
		return tx
	}
	tests := []struct {
		name    string
		opts    matcher.Options
		rows    []reconcile.Transaction
		earlier []reconcile.Transaction // an earlier night's file, as its memory keeps it
		want    []brief
		hint    string
	}{
		{
			name: "ours among the rows",
			rows: []reconcile.Transaction{pay("O1", "T1", 100, "09:00"), pay("O1", "T3", 100, "09:05")},
			want: []brief{{reconcile.DuplicatePayment, "T3O1", true}},
		},
		{
			name: "none of the rows is ours",
			rows: []reconcile.Transaction{pay("O1", "T2", 100, "09:00"), pay("O1", "T3", 100, "09:05")},
			want: []brief{{reconcile.DuplicatePayment, "T3O1", false}},
			hint: `our record holds channel id "T1", which no row carries`,
		},
		{
			name: "none is ours, in a file whose ids are not ours to compare",
			opts: matcher.Options{ForeignIDs: true},
			rows: []reconcile.Transaction{pay("O1", "T2", 100, "09:00"), pay("O1", "T3", 100, "09:05")},
			want: []brief{{reconcile.DuplicatePayment, "T3O1", true}},
		},
		{
			name:    "ours settled on an earlier night",
			rows:    []reconcile.Transaction{pay("O1", "T3", 100, "09:05")},
			earlier: []reconcile.Transaction{earlierRow("T1")},
			want:    []brief{{reconcile.DuplicatePayment, "T3O1", true}},
		},
		{
			name:    "an earlier night's row is not ours either",
			rows:    []reconcile.Transaction{pay("O1", "T3", 100, "09:05")},
			earlier: []reconcile.Transaction{earlierRow("T0")},
			want:    []brief{{reconcile.DuplicatePayment, "T3O1", false}},
			hint:    "which no row carries",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := matcher.New(day, tt.opts)
			for _, r := range tt.rows {
				m.AddRow(r)
			}
			m.AddLocal(ours)
			if tt.earlier != nil {
				m.Nights().Hash()
				if err := m.Nights().Add(yesterday, memory.Blob(memory.Encode(tt.earlier))); err != nil {
					t.Fatal(err)
				}
			}
			res := m.Classify(matcher.Known{})
			if got := briefs(res.Findings); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("findings: got %+v, want %+v", got, tt.want)
			}
			if tt.hint != "" && !strings.Contains(res.Findings[0].Hint, tt.hint) {
				t.Errorf("hint: got %q, want it to contain %q", res.Findings[0].Hint, tt.hint)
			}
		})
	}
}
