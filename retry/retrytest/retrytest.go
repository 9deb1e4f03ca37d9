// Package retrytest is what the tests of clients under the job's retry
// policy share: waits recorded instead of slept.
package retrytest

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Waits records the waits of a retry policy instead of sleeping them; its
// Sleep goes in retry.Policy.Sleep. Safe for concurrent use.
type Waits struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep records d and returns at once (ctx's error, if it has ended).
func (w *Waits) Sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

// All is the waits recorded, in order.
func (w *Waits) All() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.d)
}
