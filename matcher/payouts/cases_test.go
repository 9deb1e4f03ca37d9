package payouts

import (
	"math"
	"testing"
)

// A payout split by the channel into two credits on two nights: the first
// night tells it short, and the later credit, naming it, completes it
// (docs/payouts.md); it is not an unexpected credit.
func TestSplitPayoutCompletedOnALaterNight(t *testing.T) {
	// The 28th brought 45.00 of po_1Split's 100.00 (told short then).
	short := with(pay("stripe", "po_1Split", 10000, "2026-11-28"), func(p *Open) {
		p.Arrived, p.ArrivedOn, p.ArrivedAmount, p.Short = true, date0("2026-11-28"), 4500, true
	})
	// The 29th's statement: the rest, naming it.
	rest := credit("B2", 5500, "2026-11-29", "STRIPE", "PAYOUT po_1Split 2/2")
	r := Match(Input{Day: date0("2026-11-29"), Payouts: []Open{short}, Entries: []Entry{rest}, Terms: terms})
	got := summarize(r)
	if len(got.taken) != 1 || len(got.arrivals) != 1 {
		t.Errorf("taken %v, arrivals %v: the credit completing po_1Split is not taken for it", got.taken, got.arrivals)
	}
	if got.cases[0] != "stripe/po_1Split arrived 10000" {
		t.Errorf("case %s, want arrived 10000", got.cases[0])
	}
	// Three nights on, the credit left over is told as money no payout
	// explains: 55.00 of po_1Split's own money.
	rest.Earlier = true
	later := summarize(Match(Input{Day: date0("2026-12-03"), Payouts: []Open{short}, Entries: []Entry{rest}, Terms: terms}))
	for _, f := range later.findings {
		t.Errorf("the 3rd: %s", f)
	}
}

// A payout id that is the start of another, cut at a non-letter: the
// credit names PAY-0001-B only, and PAY-0001 (another amount) stays
// expected.
func TestIDPrefixOfAnother(t *testing.T) {
	a := pay("shop", "PAY-0001", 3000, "2026-12-02")
	b := pay("shop", "PAY-0001-B", 2000, "2026-12-02")
	e := credit("B1", 2000, "2026-12-02", "ACME PSP", "SETTLEMENT PAY-0001-B")
	r := Match(Input{Day: date0("2026-12-02"), Payouts: []Open{a, b}, Entries: []Entry{e}, Terms: terms})
	got := summarize(r)
	if len(got.findings) > 0 {
		t.Errorf("findings %v, want none", got.findings)
	}
	want := []string{"shop/PAY-0001 expected 0", "shop/PAY-0001-B arrived 2000"}
	if len(got.cases) != 2 || got.cases[0] != want[0] || got.cases[1] != want[1] {
		t.Errorf("cases %v, want %v", got.cases, want)
	}
}

// TestReturnedStaysReturned: a payout an earlier night found sent back is
// returned on the nights after, not arrived again.
func TestReturnedStaysReturned(t *testing.T) {
	back := with(pay("stripe", "po_1Back", 5000, "2026-11-28"), func(p *Open) {
		p.Arrived, p.ArrivedOn, p.ArrivedAmount, p.Returned = true, date0("2026-11-28"), 5000, true
	})
	got := summarize(Match(Input{Day: date0("2026-11-30"), Payouts: []Open{back}, Terms: terms}))
	if len(got.cases) != 1 || got.cases[0] != "stripe/po_1Back returned 5000" || len(got.findings) != 0 {
		t.Errorf("cases %v, findings %v", got.cases, got.findings)
	}
}

// A split payout whose earlier arrivals and tonight's credit add up past
// an int64 (a statement file is bounded, nights of them are not): what
// arrived holds at the largest int64 rather than wrapping to a negative.
func TestArrivedHolds(t *testing.T) {
	short := with(pay("stripe", "po_1Split", 9_000_000_000_000_000_000, "2026-11-28"), func(p *Open) {
		p.Arrived, p.ArrivedOn, p.ArrivedAmount, p.Short = true, date0("2026-11-28"), 7_000_000_000_000_000_000, true
	})
	rest := credit("B2", 2_300_000_000_000_000_000, "2026-11-29", "STRIPE", "PAYOUT po_1Split 2/2")
	r := Match(Input{Day: date0("2026-11-29"), Payouts: []Open{short}, Entries: []Entry{rest}, Terms: terms})
	if len(r.Cases) != 1 || r.Cases[0].Arrived != math.MaxInt64 {
		t.Fatalf("cases %+v, want po_1Split's arrived held at %d", r.Cases, int64(math.MaxInt64))
	}
}
