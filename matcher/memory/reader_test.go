package memory

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"reconcile"
)

// keys is a Tonight of payment keys ORD000000001 …, and unseen ones.
type keys struct {
	keys, unseen []string
}

func (k keys) Keys() int { return len(k.keys) }

func (k keys) HashKeys(indexes []int32, hashes []KeyHash) {
	for i, gi := range indexes {
		hashes[i] = HashKey(reconcile.KindPayment, []byte(k.keys[gi]))
	}
}

func (k keys) Unseen() []KeyHash {
	out := make([]KeyHash, len(k.unseen))
	for i, u := range k.unseen {
		out[i] = HashKey(reconcile.KindPayment, []byte(u))
	}
	return out
}

func manyKeys(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%09d", prefix, i)
	}
	return out
}

// TestPassesListEveryKeyOnce: in passes of a quarter of the keys each,
// every key is listed once, by hash, in its own pass.
func TestPassesListEveryKeyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("800,000 keys")
	}
	const n = 800_000
	defer func(was int) { passKeys = was }(passKeys)
	passKeys = n / 4
	tonight := keys{keys: manyKeys("ORD", n)}
	r := NewReader(tonight, nil, nil, nil)
	if got := r.Passes(); got != 4 {
		t.Fatalf("%d passes, want 4", got)
	}
	seen := make([]bool, n)
	listed := 0
	for p := range 4 {
		r.Pass(p)
		for j := range len(r.list) / entrySize {
			e := r.list[j*entrySize : (j+1)*entrySize]
			gi := binary.BigEndian.Uint32(e[16:])
			if h := HashKey(reconcile.KindPayment, []byte(tonight.keys[gi])); !bytes.Equal(e[:16], h[:]) || seen[gi] || prefix(h[:], 2) != p {
				t.Fatalf("pass %d, entry %d: key %d's hash wrong, of another pass or listed twice", p, j, gi)
			}
			seen[gi] = true
			if j > 0 && bytes.Compare(r.list[(j-1)*entrySize:(j-1)*entrySize+16], e[:16]) > 0 {
				t.Fatalf("pass %d: entry %d is before entry %d's hash", p, j, j-1)
			}
		}
		listed += len(r.list) / entrySize
	}
	if listed != n {
		t.Fatalf("keys by hash: %d listed in the passes, want %d", listed, n)
	}
	r.Forget()
	if r.list != nil || r.passOf != nil {
		t.Error("the keys listed by hash are kept past Forget")
	}
}

// TestPartsInRanges: the parts chosen with tonight's keys cut into one
// range per processor are those every key's probe names, one by one.
func TestPartsInRanges(t *testing.T) {
	if testing.Short() {
		t.Skip("300,000 keys")
	}
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var earlier []reconcile.Transaction
	for _, key := range manyKeys("E", 300_000) {
		earlier = append(earlier, reconcile.Transaction{Kind: reconcile.KindPayment, OrderNo: key, ChannelTxnID: "T" + key,
			Amount: 100, Currency: "CNY", OccurredAt: at, Status: reconcile.StatusSuccess})
	}
	lay := Encode(earlier)
	// Other keys: what it chooses is the filter's false positives.
	r := NewReader(keys{keys: manyKeys("O", 300_000)}, nil, nil, nil)
	chosen, err := r.Parts(lay.Bits, lay.Filter)
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for j := 0; j < len(r.list)/entrySize; j++ {
		if h := r.list[j*entrySize : j*entrySize+16]; mayHold(lay.Filter, 0, lay.Bits, h) {
			want = append(want, prefix(h, PartBits(lay.Bits)))
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if len(want) == 0 || !slices.Equal(chosen, want) {
		t.Errorf("chose %d parts, want the %d the keys' probes name one by one", len(chosen), len(want))
	}
}
