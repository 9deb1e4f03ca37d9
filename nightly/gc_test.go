package nightly

import (
	"runtime/debug"
	"testing"
)

// TestReadingGC: while nights are read the collector runs rarer, and its
// pace is set back once the last of them is done, whatever the order.
func TestReadingGC(t *testing.T) {
	usual := debug.SetGCPercent(100)
	defer debug.SetGCPercent(usual)
	a, b := readingGC(), readingGC()
	if got := debug.SetGCPercent(-1); got != 100*readingGCFactor {
		t.Errorf("while reading: GOGC %d, want %d", got, 100*readingGCFactor)
	}
	debug.SetGCPercent(100 * readingGCFactor)
	a()
	a() // twice is once
	if got := debug.SetGCPercent(-1); got != 100*readingGCFactor {
		t.Errorf("one night still reading: GOGC %d, want %d", got, 100*readingGCFactor)
	}
	debug.SetGCPercent(100 * readingGCFactor)
	b()
	if got := debug.SetGCPercent(-1); got != 100 {
		t.Errorf("after: GOGC %d, want 100", got)
	}
	debug.SetGCPercent(100)
}
