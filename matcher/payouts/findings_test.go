package payouts

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"reconcile"
)

// TestFindings checks every field of each kind of finding: what the
// ledger keeps, the workbook shows and the alert weighs.
func TestFindings(t *testing.T) {
	po := pay("stripe", "po_1QxLate", 4821350, "2026-11-29")
	po.Line = 7
	short := pay("adyen", "batch 412", 17910, "2026-12-01")
	tests := []struct {
		name    string
		payouts []Open
		entries []Entry
		want    reconcile.Finding
	}{
		{
			name:    "payout_missing",
			payouts: []Open{po},
			want: reconcile.Finding{Category: reconcile.PayoutMissing, Kind: reconcile.KindPayout, ChannelTxnID: "po_1QxLate",
				HasChannel: true, ChannelAmount: 4821350, Currency: "USD", OccurredAt: date0("2026-11-29"), Line: 7,
				Hint: "stripe payout po_1QxLate of 48213.50 USD expected on 2026-11-29 has not reached the bank by 2026-12-03 (3 days allowed). " +
					"Ask stripe where it is, or look for it on another of our accounts.",
				Payout: &reconcile.PayoutFacts{Channel: "stripe", ID: "po_1QxLate", ExpectedOn: date0("2026-11-29")}},
		},
		{
			name:    "payout_amount_mismatch",
			payouts: []Open{short},
			entries: []Entry{credit("B8", 17000, "2026-12-01", "", "TX000000412XT batch 412, AcmeShopECOM")},
			want: reconcile.Finding{Category: reconcile.PayoutAmountMismatch, Kind: reconcile.KindPayout, ChannelTxnID: "batch 412", LocalTxnID: "B8",
				HasChannel: true, ChannelAmount: 17910, Currency: "USD", HasLocal: true, LocalAmount: 17000, LocalCurrency: "USD",
				OccurredAt: date0("2026-12-01"),
				Hint: "adyen payout batch 412 of 179.10 USD expected on 2026-12-01 reached the bank as a credit of 170.00 USD on 2026-12-01 " +
					"(account NL01, bank reference B8): 9.10 USD less than the payout. Ask adyen, or the bank, where the difference went.",
				Payout: &reconcile.PayoutFacts{Channel: "adyen", ID: "batch 412", ExpectedOn: date0("2026-12-01"),
					Account: "NL01", BankRef: "B8", BookedOn: date0("2026-12-01")}},
		},
		{
			name:    "unexpected_credit",
			entries: []Entry{credit("", 1234, "2026-11-20", "STRIPE PAYMENTS", "")},
			want: reconcile.Finding{Category: reconcile.UnexpectedCredit, Kind: reconcile.KindPayout, ChannelTxnID: "NL01/",
				HasLocal: true, LocalAmount: 1234, LocalCurrency: "USD", OccurredAt: date0("2026-11-20"),
				Hint: "The credit of 12.34 USD on 2026-11-20 (account NL01, no bank reference, key NL01/) from STRIPE PAYMENTS matches no payout " +
					"after waiting the 3 days a payout of stripe may take to arrive. Find what it pays: a payout the channel's files do not hold, " +
					"or money that is not the channel's.",
				Payout: &reconcile.PayoutFacts{Account: "NL01", BankRef: "NL01/", BookedOn: date0("2026-11-20")}},
		},
		{
			name:    "unexpected_credit, two payouts fit",
			payouts: []Open{pay("adyen", "batch 1", 777, "2026-12-01"), pay("adyen", "batch 2", 777, "2026-12-02")},
			entries: []Entry{with(credit("B4", 777, "", "ADYEN N.V.", ""), func(e *Entry) { e.ValueOn = date0("2026-12-02") })},
			want: reconcile.Finding{Category: reconcile.UnexpectedCredit, Kind: reconcile.KindPayout, ChannelTxnID: "NL01/B4", LocalTxnID: "B4",
				HasLocal: true, LocalAmount: 777, LocalCurrency: "USD", OccurredAt: date0("2026-12-02"),
				Hint: "The credit of 7.77 USD on 2026-12-02 (account NL01, bank reference B4) fits 2 payouts by amount and date (see Related). " +
					"A person must choose which it is: the amount alone does not tell them apart.",
				Related: []string{"adyen payout batch 1 of 7.77 USD expected on 2026-12-01", "adyen payout batch 2 of 7.77 USD expected on 2026-12-02"},
				Payout:  &reconcile.PayoutFacts{Account: "NL01", BankRef: "B4", BookedOn: date0("2026-12-02")}},
		},
		{
			name:    "payout_returned",
			payouts: []Open{arrived},
			entries: []Entry{debit("B1", 5000, "2026-12-02", "", "RETURN po_1Arrived")},
			want: reconcile.Finding{Category: reconcile.PayoutReturned, Kind: reconcile.KindPayout, ChannelTxnID: "po_1Arrived", LocalTxnID: "B1",
				HasChannel: true, ChannelAmount: 5000, Currency: "USD", HasLocal: true, LocalAmount: 5000, LocalCurrency: "USD",
				OccurredAt: date0("2026-12-02"),
				Hint: "stripe payout po_1Arrived of 50.00 USD expected on 2026-11-28, arrived on 2026-11-28, went back: the debit of 50.00 USD " +
					"on 2026-12-02 (account NL01, bank reference B1) names it. Ask stripe why, and whether it will pay it again.",
				Payout: &reconcile.PayoutFacts{Channel: "stripe", ID: "po_1Arrived", ExpectedOn: date0("2026-11-28"),
					Account: "NL01", BankRef: "B1", BookedOn: date0("2026-12-02")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Match(Input{Day: date0("2026-12-03"), Payouts: tt.payouts, Entries: tt.entries, Terms: terms})
			if len(r.Findings) != 1 {
				t.Fatalf("got %d findings, want 1: %+v", len(r.Findings), r.Findings)
			}
			if got := r.Findings[0]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%+v\n%+v\nwant\n%+v\n%+v", got, *got.Payout, tt.want, *tt.want.Payout)
			}
		})
	}
}

// TestMismatchRelated checks that a group's finding names its other
// payouts and entries.
func TestMismatchRelated(t *testing.T) {
	tests := []struct {
		name    string
		payouts []Open
		entries []Entry
		want    []string
	}{
		{
			name:    "one entry of two payouts",
			payouts: []Open{pay("stripe", "po_A1", 10000, "2026-12-01"), pay("stripe", "po_B2", 2500, "2026-12-01")},
			entries: []Entry{credit("B1", 12000, "2026-12-02", "", "po_A1 po_B2")},
			want:    []string{"stripe payout po_B2 of 25.00 USD expected on 2026-12-01"},
		},
		{
			name:    "two entries of one payout",
			payouts: []Open{pay("stripe", "po_C3", 10000, "2026-12-01")},
			entries: []Entry{credit("B2", 6000, "2026-12-02", "", "po_C3"), credit("B3", 3000, "2026-12-01", "", "po_C3")},
			want: []string{"credit of 60.00 USD on 2026-12-02 (account NL01, bank reference B2)",
				"credit of 30.00 USD on 2026-12-01 (account NL01, bank reference B3)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Match(Input{Day: date0("2026-12-03"), Payouts: tt.payouts, Entries: tt.entries, Terms: terms})
			if len(r.Findings) != 1 || r.Findings[0].Category != reconcile.PayoutAmountMismatch {
				t.Fatalf("got %+v, want one payout_amount_mismatch", r.Findings)
			}
			if got := r.Findings[0].Related; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRelatedBounded checks that an entry a crowd of payouts fits names
// a few of them, and how many more.
func TestRelatedBounded(t *testing.T) {
	var payouts []Open
	for i := range 25 {
		payouts = append(payouts, pay("stripe", fmt.Sprintf("po_%04d", i), 777, "2026-12-02"))
	}
	r := Match(Input{Day: date0("2026-12-03"), Terms: terms, Payouts: payouts, Entries: []Entry{credit("B1", 777, "2026-12-02", "STRIPE", "")}})
	if len(r.Findings) != 1 {
		t.Fatalf("got %d findings, want 1", len(r.Findings))
	}
	rel := r.Findings[0].Related
	if got, want := len(rel), maxRelated+1; got != want {
		t.Fatalf("got %d Related lines, want %d", got, want)
	}
	if got, want := rel[0], "stripe payout po_0000 of 7.77 USD expected on 2026-12-02"; got != want {
		t.Errorf("got first line %q, want %q", got, want)
	}
	if got, want := rel[maxRelated], "and 15 more"; got != want {
		t.Errorf("got last line %q, want %q", got, want)
	}
}

// TestDeterministic shuffles a night with every kind of case in it: the
// result must not move.
func TestDeterministic(t *testing.T) {
	in := bigNight(3000)
	for _, tt := range matchTests {
		in.Payouts = append(in.Payouts, tt.payouts...)
		in.Entries = append(in.Entries, tt.entries...)
	}
	// Keys are unique within a night: the table reuses B1, B2, …
	for i := range in.Entries {
		in.Entries[i].Key += "/" + strconv.Itoa(i)
	}
	want := Match(in)
	seen := map[reconcile.Category]bool{}
	for _, f := range want.Findings {
		seen[f.Category] = true
	}
	if len(seen) != len(reconcile.PayoutCategories) || len(want.Arrivals) < 2900 {
		t.Fatalf("got findings of %d categories and %d arrivals: the night is not what the test means", len(seen), len(want.Arrivals))
	}
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 5 {
		r.Shuffle(len(in.Payouts), func(i, j int) { in.Payouts[i], in.Payouts[j] = in.Payouts[j], in.Payouts[i] })
		r.Shuffle(len(in.Entries), func(i, j int) { in.Entries[i], in.Entries[j] = in.Entries[j], in.Entries[i] })
		if got := Match(in); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: the shuffled night gives another result", round)
		}
	}
}
