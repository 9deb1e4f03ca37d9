package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reconcile/fetch"
	"reconcile/retry"
	"reconcile/retry/retrytest"
)

func TestClientGet(t *testing.T) {
	tests := []struct {
		name    string
		answers []func(w http.ResponseWriter)
		calls   int
		want    string // in the error; "" for success
		minWait time.Duration
	}{
		{"503 then 200", []func(http.ResponseWriter){status(503, ""), status(200, `{"ok":true}`)}, 2, "", 0},
		{"429 with Retry-After", []func(http.ResponseWriter){retryAfter("7"), status(200, `{}`)}, 2, "", 7 * time.Second},
		{"400 is not retried", []func(http.ResponseWriter){status(400, `{"code":"PARAM_ERROR"}`)}, 1, "HTTP 400", 0},
		{"500 until the attempts run out", []func(http.ResponseWriter){status(500, "")}, 3, "gave up after 3 attempts", 0},
		{"an answer past the limit", []func(http.ResponseWriter){status(200, strings.Repeat("x", 2048))}, 1, "larger than 1024 bytes", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1)) - 1
				tt.answers[min(n, len(tt.answers)-1)](w)
			}))
			defer srv.Close()
			ws := &retrytest.Waits{}
			c := &fetch.Client{HTTP: srv.Client(), Retry: retry.Policy{Attempts: 3, Sleep: ws.Sleep}, Answer: 1024}
			ans, err := c.Get(context.Background(), "tradebill", func(ctx context.Context) (*http.Request, error) {
				return http.NewRequestWithContext(ctx, "GET", srv.URL+"/v3/bill", nil)
			})
			if int(calls.Load()) != tt.calls {
				t.Errorf("calls: got %d, want %d", calls.Load(), tt.calls)
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("got %v, want success", err)
			case tt.want == "" && ans.Status != 200:
				t.Errorf("status %d, want 200", ans.Status)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error with %q", err, tt.want)
			}
			if tt.minWait > 0 && (len(ws.All()) == 0 || ws.All()[0] < tt.minWait) {
				t.Errorf("waits %v, want the first at least %v", ws.All(), tt.minWait)
			}
		})
	}

	t.Run("a 4xx keeps its body for the channel's error code", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			status(400, `{"code":"STATEMENT_CREATING"}`)(w)
		}))
		defer srv.Close()
		c := &fetch.Client{HTTP: srv.Client()}
		_, err := c.Get(context.Background(), "tradebill", func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		})
		se, ok := errors.AsType[*fetch.StatusError](err)
		if !ok || se.Status != 400 || !strings.Contains(string(se.Body), "STATEMENT_CREATING") {
			t.Errorf("got %v, want a *StatusError 400 with the body", err)
		}
	})

	t.Run("a failing URL's query and user are not repeated", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.NotFoundHandler())
		url := strings.Replace(srv.URL, "https://", "https://report:hunter2@", 1) + "/bill?token=s3cret"
		srv.Close() // nothing listens: the connection is refused
		c := &fetch.Client{HTTP: srv.Client(), Retry: retry.Policy{Attempts: 1}}
		_, err := c.Get(context.Background(), "download", func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, "GET", url, nil)
		})
		if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("got %v, want an error without the token or the password", err)
		}
	})
}

func status(code int, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.WriteHeader(code)
		w.Write([]byte(body))
	}
}

func retryAfter(secs string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", secs)
		w.WriteHeader(http.StatusTooManyRequests)
	}
}
