package offheap

import (
	"runtime"
	"testing"
	"unsafe"
)

// record stands for the row store's records: no pointers, 48 bytes.
type record struct {
	amount int64
	rest   [40]byte
}

// TestSlice: an array past the threshold lives outside the heap until
// freed; a small one is an ordinary slice; Release returns the rest.
func TestSlice(t *testing.T) {
	ms := &Mappings{}
	small := Slice[uint64](ms, 1000, true, false)
	if len(small) != 1000 || ms.Mapped() != 0 {
		t.Fatalf("small array: len %d, %d regions; want 1000, 0", len(small), ms.Mapped())
	}
	n := Threshold/8 + 1
	table := Slice[uint64](ms, n, true, true)
	nr := Threshold/int(unsafe.Sizeof(record{})) + 1
	rows := Slice[record](ms, nr, false, false)
	if len(table) != n || len(rows) != 0 || cap(rows) != nr {
		t.Fatalf("big arrays: table len %d, rows len %d cap %d; want %d, 0, %d", len(table), len(rows), cap(rows), n, nr)
	}
	for i := range table {
		if table[i] != 0 {
			t.Fatalf("table[%d] = %d, want a zeroed array", i, table[i])
		}
		table[i] = uint64(i)
	}
	rows = append(rows, record{amount: 7})
	if rows[0].amount != 7 {
		t.Fatalf("rows[0].amount = %d, want 7", rows[0].amount)
	}
	want := 2
	if runtime.GOOS != "linux" {
		want = 0 // elsewhere the arrays are ordinary slices
	}
	if mapped := ms.Mapped(); mapped != want {
		t.Fatalf("%d regions, want %d", mapped, want)
	}
	before := ms.Mapped()
	Free(ms, table)
	if before > 0 && ms.Mapped() != before-1 {
		t.Errorf("after Free: %d regions, want %d", ms.Mapped(), before-1)
	}
	ms.Release()
	if ms.Mapped() != 0 {
		t.Errorf("after Release: %d regions, want 0", ms.Mapped())
	}
}
