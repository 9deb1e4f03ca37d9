package rowstore

import (
	"testing"
	"unsafe"
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
