package matcher

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"reconcile"
)

// TestLargeIndex runs a matcher whose arrays are past the threshold to the
// end: every row matched, the memory whole, the arrays returned.
func TestLargeIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("large index")
	}
	day, err := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	const n = 800_000 // rows of 48 bytes: past offheap.Threshold
	m := New(day, Options{ExpectRows: n})
	if runtime.GOOS != "linux" {
		t.Skip("the arrays are outside the heap on Linux only")
	}
	if m.big.Mapped() == 0 {
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
	// As a run that reads earlier nights does: tonight's keys hashed into
	// their passes, let go of by Classify.
	m.Nights().Hash()
	res := m.Classify(Known{})
	if m.nights != nil {
		t.Error("the keys listed by hash are kept past Classify")
	}
	if res.Counts[reconcile.Matched] != n || len(res.Findings) != 0 {
		t.Fatalf("matched %d with %d findings, want %d and none", res.Counts[reconcile.Matched], len(res.Findings), n)
	}
	rows := 0
	for _, p := range m.Memory().Parts {
		rows += p.Rows
	}
	if rows != n {
		t.Errorf("memory: %d rows, want %d", rows, n)
	}
	if m.big.Mapped() != 0 {
		t.Errorf("after Memory: %d regions still mapped", m.big.Mapped())
	}
}
