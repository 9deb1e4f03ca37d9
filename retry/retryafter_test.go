package retry_test

import (
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
