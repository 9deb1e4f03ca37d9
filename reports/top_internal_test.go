package reports

import (
	"math/rand/v2"
	"slices"
	"testing"

	"reconcile"
)

// TestTopForReview: the k kept as they come are the first k of every
// finding needing review sorted by amount at risk, largest first, ties in
// the findings' order; the total counts them all. Amounts repeat often
// and currencies differ, so ties and the exact major-unit comparison are
// both met.
func TestTopForReview(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 32))
	categories := []reconcile.Category{reconcile.Matched, reconcile.Pending, reconcile.MissingLocal,
		reconcile.AmountMismatch, reconcile.DuplicatePayment, reconcile.Chargeback}
	currencies := []string{"CNY", "JPY", "USD", "KWD"}
	for round := range 200 {
		fs := make([]reconcile.Finding, r.IntN(60))
		for i := range fs {
			fs[i] = reconcile.Finding{Category: categories[r.IntN(len(categories))], Line: i + 1,
				HasChannel: true, ChannelAmount: int64(r.IntN(5)) * 1000, Currency: currencies[r.IntN(len(currencies))],
				AutoReverse: r.IntN(8) == 0}
		}
		var want []reconcile.Finding
		for _, f := range fs {
			if f.NeedsReview() {
				want = append(want, f)
			}
		}
		slices.SortStableFunc(want, func(a, b reconcile.Finding) int {
			return compareMajor(b.AtRisk(), findingCurrency(b), a.AtRisk(), findingCurrency(a))
		})
		for _, k := range []int{0, 1, 3, 5, maxTop} {
			got, total := topForReview(fs, k)
			if total != len(want) {
				t.Fatalf("round %d, k %d: total %d, want %d", round, k, total, len(want))
			}
			top := want[:min(k, len(want))]
			if len(got) != len(top) {
				t.Fatalf("round %d, k %d: %d kept, want %d", round, k, len(got), len(top))
			}
			for i := range top {
				if got[i].Line != top[i].Line {
					t.Fatalf("round %d, k %d: place %d holds line %d, want line %d", round, k, i, got[i].Line, top[i].Line)
				}
			}
		}
	}
}
