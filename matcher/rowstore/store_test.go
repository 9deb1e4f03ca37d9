package rowstore

import (
	"testing"
	"time"
	"unsafe"

	"reconcile"
	"reconcile/matcher/internal/offheap"
)

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

// TestDropIndex: once the hash table is let go of, no key is found, and
// the groups are read as before.
func TestDropIndex(t *testing.T) {
	var big offheap.Mappings
	defer big.Release()
	s := New(time.UTC, 0, &big, nil)
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for i, key := range []string{"ORD-1", "ORD-2", "ORD-3"} {
		s.Add(reconcile.Transaction{Kind: reconcile.KindPayment, OrderNo: key, ChannelTxnID: "T" + key, Amount: int64(100 + i),
			Currency: "CNY", Status: reconcile.StatusSuccess, OccurredAt: at, Line: i + 2}, false)
	}
	gi := s.Find(reconcile.KindPayment, "ORD-2")
	if gi < 0 {
		t.Fatal("ORD-2 not found before the index is dropped")
	}
	s.DropIndex()
	if got := s.Find(reconcile.KindPayment, "ORD-2"); got != -1 {
		t.Errorf("after DropIndex, Find = %d, want -1", got)
	}
	if got := s.Groups(); got != 3 {
		t.Errorf("after DropIndex, %d groups, want 3", got)
	}
	if g := s.Glance(gi); g.Rows != 1 || g.Row.Amount != 101 {
		t.Errorf("after DropIndex, group %d reads %+v, want one row of 101", gi, g)
	}
}
