package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"reconcile/retry"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"999999999999", 5 * time.Minute},
		{now.Add(90 * time.Second).Format(http1123), 90 * time.Second},
		{now.Add(-time.Hour).Format(http1123), 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := retry.RetryAfter(tt.header, now, 5*time.Minute); got != tt.want {
			t.Errorf("RetryAfter(%q): got %v, want %v", tt.header, got, tt.want)
		}
	}
}

const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

// TestRefusalAsTheBudgetEnds: an answer no retry mends, arriving as the
// budget runs out, is the error, not the transient failure before it.
func TestRefusalAsTheBudgetEnds(t *testing.T) {
	refused := errors.New("401 invalid key")
	busy := errors.New("503")
	classify := func(err error) (bool, time.Duration) { return !errors.Is(err, refused), 0 }
	p := retry.Policy{Budget: 50 * time.Millisecond, Base: time.Millisecond, Cap: time.Millisecond, Sleep: func(context.Context, time.Duration) error { return nil }}
	rt, cancel := p.Start(context.Background(), classify)
	defer cancel()
	calls := 0
	err := rt.Do("report_types", func(ctx context.Context) error {
		calls++
		if calls == 1 {
			return busy
		}
		<-ctx.Done() // the refusal comes back as the budget ends
		return refused
	})
	if !errors.Is(err, refused) || calls != 2 {
		t.Errorf("got %v after %d calls, want the refusal after 2", err, calls)
	}
}
