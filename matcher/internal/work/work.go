// Package work shares a pass over many items among the processors: the
// row store's and the nights' memory's large loops cut their items in one
// range per processor.
package work

import (
	"runtime"
	"sync"
)

// For is how many processors share a pass over n items: one per 100,000
// items, at most one per processor.
func For(n int) int { return min(runtime.GOMAXPROCS(0), max(1, n/100000)) }

// Share is the range [lo, hi) of n items that worker w of workers takes:
// the workers' ranges cover 0 to n once, in order.
func Share(w, workers, n int) (lo, hi int) { return w * n / workers, (w + 1) * n / workers }

// Parallel runs fn(0) … fn(workers-1) at once and waits for them.
func Parallel(workers int, fn func(w int)) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() { fn(w) })
	}
	wg.Wait()
}
