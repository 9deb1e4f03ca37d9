package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	base, longest := 100*time.Millisecond, 5*time.Second
	for n := range 80 {
		ceiling := longest
		if n < 6 {
			ceiling = base << n // 3.2s at n=5, capped from n=6
		}
		var top time.Duration
		for range 300 {
			d := backoff(base, longest, n)
			if d < 0 || d > ceiling {
				t.Fatalf("n=%d: got %v, want within [0, %v]", n, d, ceiling)
			}
			top = max(top, d)
		}
		// Full jitter spreads over the whole range, not just its bottom.
		if top < ceiling/2 {
			t.Errorf("n=%d: largest of 300 waits %v, want some above %v", n, top, ceiling/2)
		}
	}
}

func TestRetryDefaults(t *testing.T) {
	r := Policy{}.withDefaults()
	if r.Attempts != 5 || r.Budget != 2*time.Minute || r.Base != time.Second || r.Cap != 30*time.Second || r.Sleep == nil {
		t.Errorf("got %+v, want 5 attempts, 2m, 1s, 30s and a sleep", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := r.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("sleep on a canceled context: got %v, want context.Canceled", err)
	}
	if time.Since(start) > time.Second {
		t.Error("sleep did not end with its context")
	}
}
