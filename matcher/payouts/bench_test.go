package payouts

import (
	"fmt"
	"testing"

	"reconcile"
)

// benchNight is a night of n payouts of one channel and about as many
// credits: nine in ten name their payout, the others come by amount from
// the channel's counterparty; a tenth of the payouts arrived on the
// nights before, within reach of a return, as steady use leaves them.
func benchNight(n int) Input {
	day := date0("2026-11-28")
	in := Input{Day: day, Terms: map[string]reconcile.PayoutTerms{"psp": {Counterparties: []string{"ACME PSP"}, Window: 3}}}
	for i := range n {
		id := fmt.Sprintf("PO-20261127%08d", i)
		amount := 100_000 + int64(i)*100 // one payout of each amount
		in.Payouts = append(in.Payouts, Open{Payout: reconcile.Payout{Channel: "psp", ID: id, Amount: amount,
			Currency: "EUR", ExpectedOn: day}})
		text := "ACME PSP PAYOUT " + id
		if i%10 == 9 {
			text = "ACME PSP SETTLEMENT"
		}
		in.Entries = append(in.Entries, Entry{Key: fmt.Sprintf("DE02/BR%08d", i), BankEntry: reconcile.BankEntry{
			Account: "DE02", Amount: amount, Currency: "EUR", Credit: true, Status: "BOOK", BookedOn: day,
			BankRef: fmt.Sprintf("BR%08d", i), Counterparty: "ACME PSP GMBH", Remittance: text}})
	}
	for i := range n / 10 {
		in.Payouts = append(in.Payouts, Open{Payout: reconcile.Payout{Channel: "psp", ID: fmt.Sprintf("PO-20261126%08d", i),
			Amount: 5_000, Currency: "EUR", ExpectedOn: day.AddDate(0, 0, -1)}, Arrived: true, ArrivedOn: day.AddDate(0, 0, -1)})
	}
	return in
}

// BenchmarkMatch is rule 15 on nights of 10,000 and 100,000 payouts:
// the time per entry should not grow with the night.
func BenchmarkMatch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		in := benchNight(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var r Result
			for b.Loop() {
				r = Match(in)
			}
			if len(r.Arrivals) != n || len(r.Findings) != 0 {
				b.Fatalf("%d arrivals, %d findings; want %d and none", len(r.Arrivals), len(r.Findings), n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(in.Entries)), "ns/entry")
		})
	}
}
