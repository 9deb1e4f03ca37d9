package reports_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"reconcile/reports"
	"reconcile/reports/slacktest"
	"reconcile/retry"
	"reconcile/retry/retrytest"
)

// retryWorkbook writes the test workbook for the notifier to upload.
func retryWorkbook(t *testing.T) string {
	t.Helper()
	res := testResult(t)
	path := filepath.Join(t.TempDir(), reports.WorkbookName(res.Run.Channel, res.Run.Day))
	if err := reports.WriteWorkbook(path, res); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkPostedOnce checks that every step after the post happened once and
// succeeded, and that the message was posted exactly once.
func checkPostedOnce(t *testing.T, srv *slacktest.Server) {
	t.Helper()
	if _, ok := srv.Count(slacktest.PostMessage); ok != 1 {
		t.Errorf("messages posted: got %d, want exactly 1", ok)
	}
	for _, path := range []string{slacktest.GetUploadURL, slacktest.Upload, slacktest.CompleteUpload} {
		if _, ok := srv.Count(path); ok != 1 {
			t.Errorf("%s: got %d successful calls, want 1", path, ok)
		}
	}
}

func TestBotNotifierRetry(t *testing.T) {
	res := testResult(t)
	msg := reports.RunMessage(res, 5)
	workbook := retryWorkbook(t)

	t.Run("5xx and 429 on the post", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		srv.Queue(slacktest.PostMessage, slacktest.Reply{Status: 500}, slacktest.Reply{Status: 500}, slacktest.Reply{Status: 429, RetryAfter: "2"})
		var sl retrytest.Waits
		retry := retry.Policy{Base: 100 * time.Millisecond, Cap: time.Second, Sleep: sl.Sleep}
		n := reports.NewBotNotifier("xoxb-test-token", "#payments-ops", retry, srv.Option())
		if err := n.Notify(context.Background(), msg, workbook, nil); err != nil {
			t.Fatalf("Notify: %v", err)
		}
		if calls, _ := srv.Count(slacktest.PostMessage); calls != 4 {
			t.Errorf("chat.postMessage calls: got %d, want 4", calls)
		}
		checkPostedOnce(t, srv)
		got := sl.All()
		if len(got) != 3 {
			t.Fatalf("sleeps: got %v, want 3", got)
		}
		// Full jitter: in [0, base·2^n] before the 429; at least the
		// Retry-After on it, and no more since the backoff is below it.
		for i, ceiling := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
			if got[i] < 0 || got[i] > ceiling {
				t.Errorf("sleep %d: got %v, want within [0, %v]", i+1, got[i], ceiling)
			}
		}
		if got[2] != 2*time.Second {
			t.Errorf("sleep after 429: got %v, want the 2s of Retry-After", got[2])
		}
	})

	t.Run("ok false not retried", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		srv.Always(slacktest.PostMessage, slacktest.Reply{Error: "invalid_auth"})
		var sl retrytest.Waits
		n := reports.NewBotNotifier("xoxb-test-token", "#payments-ops", retry.Policy{Sleep: sl.Sleep}, srv.Option())
		err := n.Notify(context.Background(), msg, workbook, nil)
		if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
			t.Fatalf("got %v, want an error naming invalid_auth", err)
		}
		if got := len(srv.Calls()); got != 1 {
			t.Errorf("calls: got %d, want 1", got)
		}
		if got := sl.All(); len(got) != 0 {
			t.Errorf("sleeps: got %v, want none", got)
		}
	})

	t.Run("400 not retried", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		srv.Always(slacktest.PostMessage, slacktest.Reply{Status: http.StatusBadRequest})
		var sl retrytest.Waits
		n := reports.NewBotNotifier("xoxb-test-token", "#payments-ops", retry.Policy{Sleep: sl.Sleep}, srv.Option())
		err := n.Notify(context.Background(), msg, workbook, nil)
		var sc slack.StatusCodeError
		if !errors.As(err, &sc) || sc.Code != http.StatusBadRequest {
			t.Fatalf("got %v, want a 400 StatusCodeError", err)
		}
		if got := len(srv.Calls()); got != 1 {
			t.Errorf("calls: got %d, want 1", got)
		}
		if got := sl.All(); len(got) != 0 {
			t.Errorf("sleeps: got %v, want none", got)
		}
	})

	t.Run("503 forever stops at attempts", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		srv.Always(slacktest.PostMessage, slacktest.Reply{Status: http.StatusServiceUnavailable})
		var sl retrytest.Waits
		retry := retry.Policy{Attempts: 4, Base: time.Second, Cap: 3 * time.Second, Sleep: sl.Sleep}
		n := reports.NewBotNotifier("xoxb-test-token", "#payments-ops", retry, srv.Option())
		err := n.Notify(context.Background(), msg, workbook, nil)
		if err == nil {
			t.Fatal("got no error from a Slack that always answers 503")
		}
		for _, want := range []string{"chat.postMessage", "gave up after 4 attempts", "503"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("got %q, want it to say %q", err, want)
			}
		}
		if calls, _ := srv.Count(slacktest.PostMessage); calls != 4 {
			t.Errorf("calls: got %d, want 4", calls)
		}
		got := sl.All()
		if len(got) != 3 {
			t.Fatalf("sleeps: got %v, want 3", got)
		}
		for i, ceiling := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
			if got[i] < 0 || got[i] > ceiling {
				t.Errorf("sleep %d: got %v, want within [0, %v]", i+1, got[i], ceiling)
			}
		}
	})

	t.Run("budget stops it early", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		srv.Always(slacktest.PostMessage, slacktest.Reply{Status: http.StatusServiceUnavailable})
		// Real waits: the budget is wall time.
		retry := retry.Policy{Attempts: 1000, Budget: 300 * time.Millisecond, Base: 20 * time.Millisecond, Cap: 80 * time.Millisecond}
		n := reports.NewBotNotifier("xoxb-test-token", "#payments-ops", retry, srv.Option())
		start := time.Now()
		err := n.Notify(context.Background(), msg, workbook, nil)
		elapsed := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), "budget") || !strings.Contains(err.Error(), "503") {
			t.Fatalf("got %v, want an error naming the budget and the last 503", err)
		}
		calls, _ := srv.Count(slacktest.PostMessage)
		if calls < 2 || calls >= 1000 {
			t.Errorf("calls: got %d, want a few, stopped by the budget", calls)
		}
		// The attempt the budget ends may be cut off before it reaches
		// Slack: it counts, though Slack never saw it.
		if !strings.Contains(err.Error(), "gave up after "+itoa(calls)+" attempts") &&
			!strings.Contains(err.Error(), "gave up after "+itoa(calls+1)+" attempts") {
			t.Errorf("got %q, want it to count %d attempts (or %d, the last cut off)", err, calls, calls+1)
		}
		if elapsed > 2*time.Second {
			t.Errorf("took %v with a 300ms budget", elapsed)
		}
	})

	t.Run("retry-after beyond the budget", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		srv.Queue(slacktest.PostMessage, slacktest.Reply{Status: 429, RetryAfter: "30"})
		var sl retrytest.Waits
		retry := retry.Policy{Budget: 10 * time.Second, Sleep: sl.Sleep}
		n := reports.NewBotNotifier("xoxb-test-token", "#payments-ops", retry, srv.Option())
		err := n.Notify(context.Background(), msg, workbook, nil)
		if err == nil || !strings.Contains(err.Error(), "gave up after 1 attempt,") || !strings.Contains(err.Error(), "budget") {
			t.Fatalf("got %v, want to give up at once on a wait longer than the budget", err)
		}
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || rl.RetryAfter != 30*time.Second {
			t.Errorf("got %v, want the RateLimitedError inside", err)
		}
		if got := sl.All(); len(got) != 0 {
			t.Errorf("sleeps: got %v, want none", got)
		}
	})

	t.Run("failed completion does not post again", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		srv.Queue(slacktest.CompleteUpload, slacktest.Reply{Status: 500})
		srv.Queue(slacktest.Upload, slacktest.Reply{Status: 502})
		n := reports.NewBotNotifier("xoxb-test-token", "#payments-ops", noWait(), srv.Option())
		if err := n.Notify(context.Background(), msg, workbook, nil); err != nil {
			t.Fatalf("Notify: %v", err)
		}
		checkPostedOnce(t, srv)
		for path, want := range map[string]int{
			slacktest.PostMessage: 1, slacktest.GetUploadURL: 1, slacktest.Upload: 2, slacktest.CompleteUpload: 2,
		} {
			if calls, _ := srv.Count(path); calls != want {
				t.Errorf("%s: got %d calls, want %d", path, calls, want)
			}
		}
		// The retried upload sends the file whole again.
		for _, c := range srv.Calls() {
			if c.Path == slacktest.Upload && c.Status == http.StatusOK {
				if want := mustRead(t, workbook); string(c.Body) != want {
					t.Errorf("uploaded %d bytes, want the workbook's %d", len(c.Body), len(want))
				}
			}
		}
	})

	t.Run("timeout retried", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		srv.Queue(slacktest.PostMessage, slacktest.Reply{Status: 500, Delay: 2 * time.Second})
		client := &http.Client{Timeout: 200 * time.Millisecond}
		n := reports.NewBotNotifier("xoxb-test-token", "#payments-ops", noWait(),
			srv.Option(), slack.OptionHTTPClient(client))
		if err := n.Notify(context.Background(), msg, workbook, nil); err != nil {
			t.Fatalf("Notify: %v", err)
		}
		if calls, _ := srv.Count(slacktest.PostMessage); calls != 2 {
			t.Errorf("chat.postMessage calls: got %d, want 2 (one timed out)", calls)
		}
		checkPostedOnce(t, srv)
	})

	t.Run("caller's cancel stops at once", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		srv.Always(slacktest.PostMessage, slacktest.Reply{Status: http.StatusServiceUnavailable})
		ctx, cancel := context.WithCancel(context.Background())
		retry := retry.Policy{Sleep: func(ctx context.Context, d time.Duration) error {
			cancel()
			return ctx.Err()
		}}
		n := reports.NewBotNotifier("xoxb-test-token", "#payments-ops", retry, srv.Option())
		err := n.Notify(ctx, msg, workbook, nil)
		if err == nil || !strings.Contains(err.Error(), "stopped after 1 attempt") {
			t.Fatalf("got %v, want it to stop after the first attempt", err)
		}
		if calls, _ := srv.Count(slacktest.PostMessage); calls != 1 {
			t.Errorf("calls: got %d, want 1", calls)
		}
	})
}

func TestWebhookNotifierRetry(t *testing.T) {
	res := testResult(t)
	msg := reports.RunMessage(res, 5)

	// webhook answers with statuses in turn, then 200.
	webhook := func(t *testing.T, statuses ...int) *slacktest.Server {
		srv := slacktest.NewServer(t)
		for _, st := range statuses {
			srv.Queue(slacktest.Webhook, slacktest.Reply{Status: st})
		}
		return srv
	}

	t.Run("500 then 200", func(t *testing.T) {
		srv := webhook(t, 500)
		var sl retrytest.Waits
		n := reports.NewWebhookNotifier(srv.WebhookURL(), nil, retry.Policy{Sleep: sl.Sleep})
		if err := n.Notify(context.Background(), msg, "", nil); err != nil {
			t.Fatalf("Notify: %v", err)
		}
		if calls, delivered := srv.Count(slacktest.Webhook); calls != 2 || delivered != 1 {
			t.Errorf("got %d calls and %d deliveries, want 2 and 1", calls, delivered)
		}
		if got := sl.All(); len(got) != 1 || got[0] > time.Second {
			t.Errorf("sleeps: got %v, want one within the default first backoff of 1s", got)
		}
	})

	t.Run("404 not retried", func(t *testing.T) {
		srv := webhook(t, 404, 404)
		n := reports.NewWebhookNotifier(srv.WebhookURL(), nil, noWait())
		err := n.Notify(context.Background(), msg, "", nil)
		if err == nil {
			t.Fatal("got no error from a 404")
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("got the webhook secret in %q", err)
		}
		if calls, _ := srv.Count(slacktest.Webhook); calls != 1 {
			t.Errorf("calls: got %d, want 1", calls)
		}
	})

	t.Run("gave up hides the url", func(t *testing.T) {
		var calls int
		var mu sync.Mutex
		down := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			return nil, &timeoutError{}
		})}
		n := reports.NewWebhookNotifier("https://hooks.slack.com/services/T0/B0/secret", down, retry.Policy{Attempts: 3, Sleep: noWait().Sleep})
		err := n.Notify(context.Background(), msg, "", nil)
		if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") {
			t.Fatalf("got %v, want to give up after 3 attempts", err)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("got the webhook secret in %q", err)
		}
		if calls != 3 {
			t.Errorf("calls: got %d, want 3", calls)
		}
	})
}

// timeoutError is what a transport says when the network does not answer.
type timeoutError struct{}

func (*timeoutError) Error() string   { return "i/o timeout" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
