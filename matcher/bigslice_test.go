package matcher

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"reconcile"
)

// TestBigSlice: an array past the threshold lives outside the heap until
// freed; a small one is an ordinary slice; release returns the rest.
func TestBigSlice(t *testing.T) {
	ms := &mappings{}
	small := bigSlice[uint64](ms, 1000, true, false)
	if len(small) != 1000 || len(ms.regions) != 0 {
		t.Fatalf("small array: len %d, %d regions; want 1000, 0", len(small), len(ms.regions))
	}
	n := bigThreshold/8 + 1
	table := bigSlice[uint64](ms, n, true, true)
	nr := bigThreshold/int(unsafe.Sizeof(row{})) + 1
	rows := bigSlice[row](ms, nr, false, false)
	if len(table) != n || len(rows) != 0 || cap(rows) != nr {
		t.Fatalf("big arrays: table len %d, rows len %d cap %d; want %d, 0, %d", len(table), len(rows), cap(rows), n, nr)
	}
	for i := range table {
		if table[i] != 0 {
			t.Fatalf("table[%d] = %d, want a zeroed array", i, table[i])
		}
		table[i] = uint64(i)
	}
	rows = append(rows, row{amount: 7})
	if rows[0].amount != 7 {
		t.Fatalf("rows[0].amount = %d, want 7", rows[0].amount)
	}
	want := 2
	if runtime.GOOS != "linux" {
		want = 0 // elsewhere the arrays are ordinary slices
	}
	if mapped := len(ms.regions); mapped != want {
		t.Fatalf("%d regions, want %d", mapped, want)
	}
	before := len(ms.regions)
	freeBig(ms, table)
	if before > 0 && len(ms.regions) != before-1 {
		t.Errorf("after freeBig: %d regions, want %d", len(ms.regions), before-1)
	}
	ms.release()
	if len(ms.regions) != 0 {
		t.Errorf("after release: %d regions, want 0", len(ms.regions))
	}
}

// TestLargeIndex runs a matcher whose arrays are past the threshold to the
// end: every row matched, the memory blob whole, the arrays returned.
func TestLargeIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("large index")
	}
	day, err := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	const n = 800_000 // rows of 48 bytes: past bigThreshold
	m := New(day, Options{ExpectRows: n})
	if runtime.GOOS != "linux" {
		t.Skip("the arrays are outside the heap on Linux only")
	}
	if len(m.big.regions) == 0 {
		t.Fatal("no array was mapped outside the heap")
	}
	at := day.Start().Add(10 * time.Hour)
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("ORD%09d", i)
		m.AddRow(reconcile.Transaction{Kind: reconcile.KindPayment, OrderNo: key, ChannelTxnID: "T" + key,
			Amount: int64(100 + i%7), Currency: "CNY", OccurredAt: at, Status: reconcile.StatusSuccess})
	}
	for i := n - 1; i >= 0; i-- { // the other way round: lookups far apart
		key := fmt.Sprintf("ORD%09d", i)
		m.AddLocal(reconcile.LocalRecord{Kind: reconcile.KindPayment, OrderNo: key, ChannelTxnID: "T" + key,
			Amount: int64(100 + i%7), Currency: "CNY", Status: "PAID", SettledAt: at})
	}
	// As a run that reads earlier nights does, in passes of a quarter of
	// the keys each: every group listed once, by hash, in its pass.
	defer func(was int) { passKeys = was }(passKeys)
	passKeys = n / 4
	m.HashKeys()
	if got := m.MemoryPasses(); got != 4 {
		t.Fatalf("%d passes, want 4", got)
	}
	seen := make([]bool, n)
	listed := 0
	for p := range 4 {
		m.MemoryPass(p)
		for j := range len(m.sorted) / sortedSize {
			e := m.sorted[j*sortedSize : (j+1)*sortedSize]
			gi := binary.BigEndian.Uint32(e[16:])
			g := &m.groups[gi]
			if h := hashKeyBytes(kindOf(g.kind()), m.arena.bytes(m.groupKey(g))); !bytes.Equal(e[:16], h[:]) || seen[gi] || prefix(h[:], 2) != p {
				t.Fatalf("pass %d, entry %d: group %d's hash wrong, of another pass or listed twice", p, j, gi)
			}
			seen[gi] = true
			if j > 0 && bytes.Compare(m.sorted[(j-1)*sortedSize:(j-1)*sortedSize+16], e[:16]) > 0 {
				t.Fatalf("pass %d: entry %d is before entry %d's hash", p, j, j-1)
			}
		}
		listed += len(m.sorted) / sortedSize
	}
	if listed != n {
		t.Fatalf("keys by hash: %d listed in the passes, want %d", listed, n)
	}
	res := m.Classify()
	if m.sorted != nil || m.passOf != nil {
		t.Error("the keys listed by hash are kept past Classify")
	}
	if res.Counts[reconcile.Matched] != n || len(res.Findings) != 0 {
		t.Fatalf("matched %d with %d findings, want %d and none", res.Counts[reconcile.Matched], len(res.Findings), n)
	}
	blob := m.Memory()
	if MemoryRows(blob) != n {
		t.Errorf("memory: %d rows, want %d", MemoryRows(blob), n)
	}
	if len(m.big.regions) != 0 {
		t.Errorf("after Memory: %d regions still mapped", len(m.big.regions))
	}
}

// TestRowSize: a row is 48 bytes, a local record 40 and a key group 16,
// which at ten million rows are most of the index; a field added to any
// should be a choice, not an accident.
func TestRowSize(t *testing.T) {
	if got := unsafe.Sizeof(row{}); got != 48 {
		t.Errorf("a row is %d bytes, want 48", got)
	}
	if got := unsafe.Sizeof(localRow{}); got != 40 {
		t.Errorf("a local record is %d bytes, want 40", got)
	}
	if got := unsafe.Sizeof(keyGroup{}); got != 16 {
		t.Errorf("a key group is %d bytes, want 16", got)
	}
}

// TestMemoryPartsInRanges: the parts chosen with tonight's keys cut into
// one range per processor are those every key's probe names, one by one.
func TestMemoryPartsInRanges(t *testing.T) {
	if testing.Short() {
		t.Skip("300,000 keys")
	}
	day, err := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	at := day.Start().Add(9 * time.Hour)
	fill := func(prefix string) *Matcher {
		m := New(day, Options{ExpectRows: 300_000})
		for i := range 300_000 {
			key := fmt.Sprintf("%s%07d", prefix, i)
			m.AddRow(reconcile.Transaction{Kind: reconcile.KindPayment, OrderNo: key, ChannelTxnID: "T" + key,
				Amount: 100, Currency: "CNY", OccurredAt: at, Status: reconcile.StatusSuccess})
		}
		return m
	}
	earlier := fill("E")
	earlier.Classify()
	lay := LayOut(earlier.Memory())
	tonight := fill("O") // other keys: what it chooses is the filter's false positives
	chosen, err := tonight.MemoryParts(lay.Bits, lay.Filter)
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for j := 0; j < len(tonight.sorted)/sortedSize; j++ {
		if h := tonight.sorted[j*sortedSize : j*sortedSize+16]; mayHold(lay.Filter, 0, lay.Bits, h) {
			want = append(want, prefix(h, PartBits(lay.Bits)))
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if len(want) == 0 || !slices.Equal(chosen, want) {
		t.Errorf("chose %d parts, want the %d the keys' probes name one by one", len(chosen), len(want))
	}
}

// TestShare: the workers' ranges cover every item once, in order, for
// counts of items below, at and above the number of workers.
func TestShare(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 100_001} {
		for workers := 1; workers <= 4; workers++ {
			next := 0
			for w := range workers {
				lo, hi := share(w, workers, n)
				if lo != next || hi < lo {
					t.Fatalf("n %d, %d workers: worker %d has [%d, %d), want it to start at %d", n, workers, w, lo, hi, next)
				}
				next = hi
			}
			if next != n {
				t.Errorf("n %d, %d workers: the ranges end at %d, want %d", n, workers, next, n)
			}
		}
	}
}
