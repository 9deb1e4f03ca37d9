package reports

import (
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// watchHeap samples the Go heap every few milliseconds until the returned
// stop is called, which gives how far the heap rose above where it stood
// at the start: the peak memory of a step, such as making the workbook.
// The heap counts objects not yet collected, and whatever else the
// process allocates meanwhile, so the figure errs on the high side.
func watchHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	note := func() {
		if v := read(); v > base && v-base > peak.Load() {
			peak.Store(v - base)
		}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				note()
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		note()
		return peak.Load()
	}
}
