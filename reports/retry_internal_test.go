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
