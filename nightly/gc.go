package nightly

import (
	"runtime/debug"
	"sync"
)

// readingGC makes the collector run readingGCFactor times rarer while
// the file and the window are read, and returns what sets it back. The
// heap then holds only rows in flight, the index living outside it
// (matcher/internal/offheap): paced by a heap of a few megabytes, the
// collector ran many times a second. From the matching on, the heap
// holds findings and the workbook, and the usual pace keeps the peak
// near what is live. The pace is the process's: nights read at once
// (a scheduler's channels) share one slower pace, set back when the last
// of them is done. A collector turned off (GOGC=off) is left off.
func readingGC() func() {
	gcPace.Lock()
	defer gcPace.Unlock()
	if gcPace.readers == 0 {
		gcPace.usual = debug.SetGCPercent(-1)
		pace := gcPace.usual
		if pace > 0 {
			pace *= readingGCFactor
		}
		debug.SetGCPercent(pace)
	}
	gcPace.readers++
	var once sync.Once
	return func() {
		once.Do(func() {
			gcPace.Lock()
			defer gcPace.Unlock()
			if gcPace.readers--; gcPace.readers == 0 {
				debug.SetGCPercent(gcPace.usual)
			}
		})
	}
}

// gcPace is the collector's usual pace while nights are being read.
var gcPace struct {
	sync.Mutex
	readers int
	usual   int
}

const readingGCFactor = 8
