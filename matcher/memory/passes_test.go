package memory

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"reconcile"
)

// TestMemoryInPasses: tonight's keys meeting two earlier nights in many
// passes find what they find in one: the same records met, the same
// unseen records seen, the same parts chosen of each night in all, each
// pass choosing only parts of its own range of key hashes, and a night
// smaller than the passes read whole in each of them without its rows met
// twice.
func TestMemoryInPasses(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	pay := func(key, id string) reconcile.Transaction {
		return reconcile.Transaction{Kind: reconcile.KindPayment, OrderNo: key, ChannelTxnID: id,
			Amount: 100, Currency: "CNY", OccurredAt: at, Status: reconcile.StatusSuccess}
	}
	// Earlier nights: a big one with a tenth of tonight's keys, half of
	// the unseen records, and keys of its own; a night of three rows,
	// smaller than any pass.
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
	nights := []reconcile.NightMemory{Encode(big), Encode(small)}
	dates := []time.Time{at.AddDate(0, 0, -2), at.AddDate(0, 0, -1)}
	if nights[0].Bits < 5 || nights[1].Bits != 0 {
		t.Fatalf("filters of %d and %d bits, want at least 5 and 0", nights[0].Bits, nights[1].Bits)
	}
	var tonight keys
	for i := range 20_000 {
		tonight.keys = append(tonight.keys, fmt.Sprintf("K%05d", i))
	}
	for i := range 2_000 {
		tonight.unseen = append(tonight.unseen, fmt.Sprintf("U%05d", i))
	}

	run := func(perPass int) (met []string, seen []int32, passes int, chosen [2][]int) {
		t.Helper()
		defer func(was int) { passKeys = was }(passKeys)
		passKeys = perPass
		r := NewReader(tonight,
			func(key int32, date time.Time, rec Record) {
				met = append(met, fmt.Sprintf("%s %s %x", tonight.keys[key], date.Format(time.DateOnly), rec.ID))
			},
			func(u int32) { seen = append(seen, u) }, nil)
		passes = r.Passes()
		for p := range passes {
			r.Pass(p)
			for n, lay := range nights {
				from, to := r.FilterRange(lay.Bits)
				parts, err := r.Parts(lay.Bits, lay.Filter[from:to])
				if err != nil {
					t.Fatal(err)
				}
				byIndex := map[int][]byte{}
				for _, part := range lay.Parts {
					byIndex[part.Index] = part.Records
				}
				for _, part := range parts {
					if shift := PartBits(lay.Bits) - r.passBits; shift >= 0 && part>>shift != p {
						t.Errorf("%d passes: pass %d chose part %d of night %d, of pass %d", passes, p, part, n, part>>shift)
					}
					if err := r.Add(dates[n], byIndex[part]); err != nil {
						t.Fatal(err)
					}
				}
				chosen[n] = append(chosen[n], parts...)
			}
		}
		slices.Sort(met)
		slices.Sort(seen)
		for n := range chosen {
			slices.Sort(chosen[n])
			chosen[n] = slices.Compact(chosen[n])
		}
		return met, seen, passes, chosen
	}
	whole, wholeSeen, one, wholeParts := run(1 << 20)
	inPasses, passSeen, many, passParts := run(1000)
	if one != 1 || many != 32 {
		t.Fatalf("passes: got %d and %d, want 1 and 32", one, many)
	}
	// 2,000 of tonight's keys in the big night and 2 in the small one; of
	// the 2,000 unseen records, 1,001 some night carried (seen once
	// however many passes read the small night whole).
	if len(whole) != 2002 || len(wholeSeen) != 1001 || len(slices.Compact(slices.Clone(wholeSeen))) != 1001 {
		t.Errorf("in one pass: %d records met and %d unseen seen, want 2002 and 1001 distinct", len(whole), len(wholeSeen))
	}
	if !slices.Equal(inPasses, whole) || !slices.Equal(passSeen, wholeSeen) {
		t.Errorf("in %d passes: %d met and %d seen, in one %d and %d; they differ", many, len(inPasses), len(passSeen), len(whole), len(wholeSeen))
	}
	for n := range wholeParts {
		if !slices.Equal(passParts[n], wholeParts[n]) {
			t.Errorf("night %d: %d parts chosen in %d passes, %d in one; they differ", n, len(passParts[n]), many, len(wholeParts[n]))
		}
	}
}
