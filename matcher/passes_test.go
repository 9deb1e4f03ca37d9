package matcher

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"reconcile"
)

// TestMemoryInPasses: tonight's keys meeting two earlier nights in many
// passes find what they find in one: the same findings, the same parts
// chosen of each night in all, each pass choosing only parts of its own
// range of key hashes, and a night smaller than the passes read whole in
// each of them without its rows counted twice.
func TestMemoryInPasses(t *testing.T) {
	day, err := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	at := day.Start().Add(9 * time.Hour)
	pay := func(key, id string) reconcile.Transaction {
		return reconcile.Transaction{Kind: reconcile.KindPayment, OrderNo: key, ChannelTxnID: id,
			Amount: 100, Currency: "CNY", OccurredAt: at, Status: reconcile.StatusSuccess}
	}
	paid := func(key string) reconcile.LocalRecord {
		return reconcile.LocalRecord{Kind: reconcile.KindPayment, OrderNo: key, Amount: 100, Currency: "CNY", Status: "PAID", SettledAt: at}
	}
	// Earlier nights: a big one with a tenth of tonight's keys (their
	// duplicates), half of the records tonight's file misses, and keys of
	// its own; a night of three rows, smaller than any pass.
	var big, small []reconcile.Transaction
	for i := range 20_000 {
		if i%10 == 3 {
			big = append(big, pay(fmt.Sprintf("K%05d", i), fmt.Sprintf("OLD%05d", i)))
		}
	}
	for i := range 2_000 {
		if i%2 == 0 {
			big = append(big, pay(fmt.Sprintf("U%05d", i), fmt.Sprintf("UID%05d", i)))
		}
	}
	for i := range 27_000 {
		big = append(big, pay(fmt.Sprintf("E%05d", i), fmt.Sprintf("EID%05d", i)))
	}
	small = append(small, pay("K00011", "SMALL11"), pay("K00021", "SMALL21"), pay("U00001", "SMALLU1"))
	nights := []Layout{LayOut(EncodeMemory(big)), LayOut(EncodeMemory(small))}
	dates := []time.Time{day.Start().AddDate(0, 0, -2), day.Start().AddDate(0, 0, -1)}
	if nights[0].Bits < 5 || nights[1].Bits != 0 {
		t.Fatalf("filters of %d and %d bits, want at least 5 and 0", nights[0].Bits, nights[1].Bits)
	}

	run := func(keys int) (findings []string, counts map[reconcile.Category]int, passes int, chosen [2][]int) {
		t.Helper()
		defer func(was int) { passKeys = was }(passKeys)
		passKeys = keys
		m := New(day, Options{})
		for i := range 20_000 {
			key := fmt.Sprintf("K%05d", i)
			m.AddRow(pay(key, "T"+key))
			m.AddLocal(paid(key))
		}
		for i := range 2_000 {
			m.AddLocal(paid(fmt.Sprintf("U%05d", i)))
		}
		passes = m.MemoryPasses()
		for p := range passes {
			m.MemoryPass(p)
			for n, lay := range nights {
				from, to := m.FilterRange(lay.Bits)
				parts, err := m.MemoryParts(lay.Bits, lay.Filter[from:to])
				if err != nil {
					t.Fatal(err)
				}
				byIndex := map[int][]byte{}
				for _, part := range lay.Parts {
					byIndex[part.Index] = part.Records
				}
				pbits := PartBits(lay.Bits)
				for _, part := range parts {
					if shift := pbits - m.passBits; shift >= 0 && part>>shift != p {
						t.Errorf("%d passes: pass %d chose part %d of night %d, of pass %d", passes, p, part, n, part>>shift)
					}
					if err := m.AddMemory(dates[n], byIndex[part]); err != nil {
						t.Fatal(err)
					}
				}
				chosen[n] = append(chosen[n], parts...)
			}
		}
		res := m.Classify()
		for _, f := range res.Findings {
			findings = append(findings, fmt.Sprintf("%s %s %s<%s", f.Category, f.Key(), f.ChannelTxnID, f.OriginalTxnID))
		}
		slices.Sort(findings)
		for n := range chosen {
			slices.Sort(chosen[n])
			chosen[n] = slices.Compact(chosen[n])
		}
		for c, n := range res.Counts {
			if n == 0 {
				delete(res.Counts, c)
			}
		}
		return findings, res.Counts, passes, chosen
	}
	whole, counts, one, wholeParts := run(1 << 20)
	inPasses, _, many, passParts := run(1000)
	if one != 1 || many != 32 {
		t.Fatalf("passes: got %d and %d, want 1 and 32", one, many)
	}
	// 2,000 duplicates of the big night and 2 of the small one; of the
	// 2,000 records missing from tonight's file, 999 that no night carried.
	want := map[reconcile.Category]int{reconcile.DuplicatePayment: 2002, reconcile.MissingChannel: 999, reconcile.Matched: 17_998}
	if !maps.Equal(counts, want) {
		t.Errorf("in one pass: findings by category %v, want %v", counts, want)
	}
	if !slices.Equal(inPasses, whole) {
		t.Errorf("in %d passes: %d findings, in one %d; they differ", many, len(inPasses), len(whole))
	}
	for n := range wholeParts {
		if !slices.Equal(passParts[n], wholeParts[n]) {
			t.Errorf("night %d: %d parts chosen in %d passes, %d in one; they differ", n, len(passParts[n]), many, len(wholeParts[n]))
		}
	}
}
