package reports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

type timeout struct{}

func (timeout) Error() string   { return "i/o timeout" }
func (timeout) Timeout() bool   { return true }
func (timeout) Temporary() bool { return true }

func TestTransient(t *testing.T) {
	post := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://slack.com/api/chat.postMessage", Err: err}
	}
	dial := func(err error) error { return post(&net.OpError{Op: "dial", Net: "tcp", Err: err}) }
	tests := []struct {
		name  string
		err   error
		retry bool
		after time.Duration
	}{
		{"rate limited", fmt.Errorf("wrapped: %w", &slack.RateLimitedError{RetryAfter: 7 * time.Second}), true, 7 * time.Second},
		{"429 without retry-after", slack.StatusCodeError{Code: 429}, true, 0},
		{"500", slack.StatusCodeError{Code: 500}, true, 0},
		{"503", slack.StatusCodeError{Code: 503}, true, 0},
		{"400", slack.StatusCodeError{Code: 400}, false, 0},
		{"403", slack.StatusCodeError{Code: 403}, false, 0},
		{"404", slack.StatusCodeError{Code: 404}, false, 0},
		{"ok false", slack.SlackErrorResponse{Err: "channel_not_found"}, false, 0},
		{"client timeout", post(timeout{}), true, 0},
		{"connection refused", dial(syscall.ECONNREFUSED), true, 0},
		{"connection reset", post(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), true, 0},
		{"closed before answering", post(io.EOF), true, 0},
		{"cut short", post(io.ErrUnexpectedEOF), true, 0},
		{"no such host", dial(&net.DNSError{Err: "no such host", Name: "slack.invalid", IsNotFound: true}), false, 0},
		{"dns timeout", dial(&net.DNSError{Err: "timeout", Name: "slack.com", IsTimeout: true}), true, 0},
		{"dns server failure", dial(&net.DNSError{Err: "server misbehaving", Name: "slack.com", IsTemporary: true}), true, 0},
		{"canceled", post(context.Canceled), false, 0},
		{"bad response", errors.New("invalid character '<' looking for beginning of value"), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			retry, after := transient(tt.err)
			if retry != tt.retry || after != tt.after {
				t.Errorf("got %v, %v; want %v, %v", retry, after, tt.retry, tt.after)
			}
		})
	}
}

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
	r := Retry{}.withDefaults()
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
