package payouts

import (
	"fmt"
	"testing"
	"time"

	"reconcile"
)

// bigNight is a night of n payouts of two channels and about as many
// entries. Nine entries in ten name their payout (Stripe's id, Adyen's
// whole reference); the tenth names nothing and comes by amount from the
// channel's counterparty. One payout in a thousand is missing, and one
// credit in a thousand from a counterparty is no payout's.
func bigNight(n int) Input {
	day := date0("2026-12-03")
	in := Input{Day: day, Terms: terms, Payouts: make([]Open, 0, n), Entries: make([]Entry, 0, n+n/1000)}
	for i := range n {
		p := Open{Payout: reconcile.Payout{Currency: "EUR", Amount: int64(100_000 + i), ExpectedOn: day.AddDate(0, 0, -(i % 3))}}
		var text, from string
		if i%2 == 0 {
			p.Channel, p.ID = "stripe", fmt.Sprintf("po_1%07dXq%d", i, i%97)
			text, from = "STRIPE PAYOUT "+p.ID, "STRIPE PAYMENTS EUROPE"
		} else {
			p.Channel, p.ID = "adyen", fmt.Sprintf("batch %d", i)
			p.Reference = fmt.Sprintf("TX%09dXT batch %d, AcmeShopECOM", i, i)
			text, from = p.Reference, "Adyen N.V."
		}
		if i%1000 == 7 {
			p.ExpectedOn = day.AddDate(0, 0, -10)
			in.Payouts = append(in.Payouts, p)
			continue
		}
		in.Payouts = append(in.Payouts, p)
		if i%10 == 9 {
			text = "PAYOUT"
		}
		in.Entries = append(in.Entries, bankCredit(i, p.Amount, p.ExpectedOn.AddDate(0, 0, min(1, i%3)), from, text))
		if i%1000 == 3 {
			in.Entries = append(in.Entries, bankCredit(n+i, 50_000_000+int64(i), day.AddDate(0, 0, -10), from, "FEES BACK"))
		}
	}
	return in
}

func bankCredit(i int, amount int64, on time.Time, from, text string) Entry {
	ref := fmt.Sprintf("BNK%09d", i)
	return Entry{Key: "NL01/" + ref, BankEntry: reconcile.BankEntry{Account: "NL01", Amount: amount, Currency: "EUR", Credit: true,
		Status: "BOOK", BookedOn: on, BankRef: ref, Counterparty: from, Remittance: text}}
}

// TestScale runs a night of a hundred thousand payouts and entries and
// counts what it finds.
func TestScale(t *testing.T) {
	const n = 100_000
	r := Match(bigNight(n))
	byCategory := map[reconcile.Category]int{}
	for _, f := range r.Findings {
		byCategory[f.Category]++
	}
	want := map[reconcile.Category]int{reconcile.PayoutMissing: n / 1000, reconcile.UnexpectedCredit: n / 1000}
	if fmt.Sprint(byCategory) != fmt.Sprint(want) {
		t.Errorf("got findings %v, want %v", byCategory, want)
	}
	if got, want := len(r.Arrivals), n-n/1000; got != want {
		t.Errorf("got %d arrivals, want %d", got, want)
	}
	if got, want := len(r.Taken), n-n/1000; got != want {
		t.Errorf("got %d entries taken, want %d", got, want)
	}
	statuses := map[string]int{}
	for _, c := range r.Cases {
		statuses[c.Status]++
	}
	if got, want := fmt.Sprint(statuses), fmt.Sprint(map[string]int{"arrived": n - n/1000, "missing": n / 1000}); got != want {
		t.Errorf("got cases %s, want %s", got, want)
	}
}
