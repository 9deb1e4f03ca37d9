package work

import "testing"

// TestShare: the workers' ranges cover every item once, in order, for
// counts of items below, at and above the number of workers.
func TestShare(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 100_001} {
		for workers := 1; workers <= 4; workers++ {
			next := 0
			for w := range workers {
				lo, hi := Share(w, workers, n)
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
