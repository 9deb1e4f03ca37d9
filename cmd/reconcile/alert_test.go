package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"reconcile/reports/slacktest"
)

// slackCLI is a CLI whose alerts go to the fake, with the waits between
// retries recorded instead of slept.
func slackCLI(fake *slacktest.Server) (*cli, *[]time.Duration) {
	c := newCLI(map[string]string{"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_CHANNEL": "#recon"})
	c.app.SlackOptions = []slack.Option{fake.Option()}
	var mu sync.Mutex
	var slept []time.Duration
	c.app.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		slept = append(slept, d)
		return ctx.Err()
	}
	return c, &slept
}

// lastPost is the blocks of the last message fake took, "" when none.
func lastPost(fake *slacktest.Server) string {
	posts := fake.OK(slacktest.PostMessage)
	if len(posts) == 0 {
		return ""
	}
	return posts[len(posts)-1].Form["blocks"]
}

// lastUpload is the last file uploaded to fake, nil when none.
func lastUpload(fake *slacktest.Server) []byte {
	uploads := fake.OK(slacktest.Upload)
	if len(uploads) == 0 {
		return nil
	}
	return uploads[len(uploads)-1].Body
}

// TestAlertArrivesOnce: Slack answers 500 twice and 429 with Retry-After
// once; the alert arrives, once.
func TestAlertArrivesOnce(t *testing.T) {
	_, dsn, bill := setup(t)
	fake := slacktest.NewServer(t)
	fake.Queue(slacktest.PostMessage, slacktest.Reply{Status: http.StatusInternalServerError},
		slacktest.Reply{Status: http.StatusInternalServerError}, slacktest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "1"})
	c, slept := slackCLI(fake)
	if code := c.run(t, runArgs(dsn, bill, t.TempDir())...); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, c.errb)
	}
	attempts, posts := fake.Count(slacktest.PostMessage)
	if posts != 1 {
		t.Errorf("messages posted: got %d, want 1", posts)
	}
	if attempts != 4 || len(*slept) != 3 {
		t.Errorf("attempts %d, waits %v; want 4 attempts and 3 waits", attempts, *slept)
	}
	if len(*slept) == 3 && (*slept)[2] < time.Second {
		t.Errorf("wait after 429: got %s, want at least Retry-After (1s)", (*slept)[2])
	}
	t.Logf("figures: 4 attempts (500, 500, 429, 200), waits %v, 1 message delivered", *slept)
}

// TestFailedAlertIsResentOnce: an alert that could not be sent is recorded
// as not sent; `reconcile alert --resend` sends it; a second resend does
// not send it again.
func TestFailedAlertIsResentOnce(t *testing.T) {
	db, dsn, bill := setup(t)
	fake := slacktest.NewServer(t)
	for range 5 { // the default budget: 5 attempts
		fake.Queue(slacktest.PostMessage, slacktest.Reply{Status: 503})
	}
	c, _ := slackCLI(fake)
	out := t.TempDir()
	if code := c.run(t, runArgs(dsn, bill, out)...); code != ExitFailed {
		t.Fatalf("exit %d, want %d (the alert was not sent)\n%s", code, ExitFailed, c.errb)
	}
	if !strings.Contains(c.errb.String(), "alert --resend") {
		t.Errorf("the error does not say how to resend:\n%s", c.errb)
	}
	runID := readSummary(t, out).RunID
	var status string
	var sent bool
	db.Pool().QueryRow(context.Background(), `SELECT status, alert_sent_at IS NOT NULL FROM runs WHERE id = $1`, runID).Scan(&status, &sent)
	if status != "SUCCEEDED" || sent {
		t.Fatalf("run: got %s sent=%v, want SUCCEEDED and not sent", status, sent)
	}

	if code := c.run(t, "alert", "--resend", runID, "--dsn", dsn); code != ExitOK {
		t.Fatalf("resend: exit %d\n%s", code, c.errb)
	}
	if code := c.run(t, "alert", "--resend", runID, "--dsn", dsn); code != ExitOK || !strings.Contains(c.out.String(), "not sent twice") {
		t.Fatalf("second resend: exit %d\n%s%s", code, c.out, c.errb)
	}
	if _, posts := fake.Count(slacktest.PostMessage); posts != 1 || len(lastUpload(fake)) == 0 {
		t.Errorf("delivered: %d messages, %d workbook bytes; want 1 message with the workbook", posts, len(lastUpload(fake)))
	}
}

// TestResendResumesAfterThePost: the message was posted, then the upload
// of the workbook failed; the resend uploads the workbook beside that
// message and does not post a second one. It used to post the message
// again.
func TestResendResumesAfterThePost(t *testing.T) {
	db, dsn, bill := setup(t)
	fake := slacktest.NewServer(t)
	fake.Queue(slacktest.GetUploadURL, slacktest.Reply{Error: "invalid_auth"})
	c, _ := slackCLI(fake)
	out := t.TempDir()
	if code := c.run(t, runArgs(dsn, bill, out)...); code != ExitFailed {
		t.Fatalf("exit %d, want %d (the workbook was not uploaded)\n%s", code, ExitFailed, c.errb)
	}
	runID := readSummary(t, out).RunID
	var delivery string
	if err := db.Pool().QueryRow(context.Background(), `SELECT coalesce(alert_delivery::text, '') FROM runs WHERE id = $1`, runID).Scan(&delivery); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(delivery, `"posted": true`) || !strings.Contains(delivery, `"ts": "`+slacktest.TS+`"`) || !strings.Contains(delivery, `"uploaded": false`) {
		t.Errorf("delivery recorded: %s, want the message posted (ts %s) and no upload", delivery, slacktest.TS)
	}

	if code := c.run(t, "alert", "--resend", runID, "--dsn", dsn); code != ExitOK {
		t.Fatalf("resend: exit %d\n%s", code, c.errb)
	}
	if code := c.run(t, "alert", "--resend", runID, "--dsn", dsn); code != ExitOK {
		t.Fatalf("second resend: exit %d\n%s", code, c.errb)
	}
	if _, posts := fake.Count(slacktest.PostMessage); posts != 1 {
		t.Errorf("messages posted: got %d, want 1", posts)
	}
	var completed []string
	for _, call := range fake.Calls() {
		if call.Path == slacktest.CompleteUpload {
			completed = append(completed, call.Form["channel_id"])
		}
	}
	if len(lastUpload(fake)) == 0 || len(completed) != 1 || completed[0] != slacktest.ChannelID {
		t.Errorf("workbook: %d bytes uploaded, shared in %q; want it shared once in %s, the message's channel", len(lastUpload(fake)), completed, slacktest.ChannelID)
	}
}
