package slacktest_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"reconcile/reports/slacktest"
)

// TestServerAnswersAsSlack: slack-go reads the server's answers as it
// reads Slack's: a post answered with the channel and timestamp, a 429's
// Retry-After, an {"ok":false} refusal, a call without a token refused.
func TestServerAnswersAsSlack(t *testing.T) {
	ctx := context.Background()
	s := slacktest.NewServer(t)
	client := slack.New("xoxb-test", s.Option())

	s.Queue(slacktest.PostMessage, slacktest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "7"},
		slacktest.Reply{Error: "invalid_auth"})
	_, _, err := client.PostMessageContext(ctx, "#recon", slack.MsgOptionText("hi", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Errorf("first post: got %v, want a RateLimitedError of 7s", err)
	}
	_, _, err = client.PostMessageContext(ctx, "#recon", slack.MsgOptionText("hi", false))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "invalid_auth" {
		t.Errorf("second post: got %v, want invalid_auth", err)
	}
	channel, ts, err := client.PostMessageContext(ctx, "#recon", slack.MsgOptionText("hi", false))
	if err != nil || channel != slacktest.ChannelID || ts != slacktest.TS {
		t.Errorf("third post: got %q %q %v, want %s %s", channel, ts, err, slacktest.ChannelID, slacktest.TS)
	}
	if calls, ok := s.Count(slacktest.PostMessage); calls != 3 || ok != 1 {
		t.Errorf("posts: got %d calls, %d ok; want 3 and 1", calls, ok)
	}
	if got := s.OK(slacktest.PostMessage)[0].Form; got["channel"] != "#recon" || got["text"] != "hi" || got["token"] != "xoxb-test" {
		t.Errorf("form of the post: got %v", got)
	}

	resp, err := http.PostForm(s.URL+slacktest.PostMessage, url.Values{"channel": {"#recon"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if calls := s.Calls(); calls[len(calls)-1].Error != "not_authed" {
		t.Errorf("a post without a token: got %+v, want not_authed", calls[len(calls)-1])
	}
}

// TestServerTakesUpload: the file uploaded to the URL the server hands
// out is recorded whole.
func TestServerTakesUpload(t *testing.T) {
	ctx := context.Background()
	s := slacktest.NewServer(t)
	client := slack.New("xoxb-test", s.Option())
	up, err := client.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "a.xlsx", FileSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: up.UploadURL, Reader: strings.NewReader("hello"), Filename: "a.xlsx"}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: up.FileID, Title: "a.xlsx"}}, Channel: slacktest.ChannelID,
	}); err != nil {
		t.Fatal(err)
	}
	uploads := s.OK(slacktest.Upload)
	if len(uploads) != 1 || string(uploads[0].Body) != "hello" {
		t.Errorf("uploads: got %+v, want one of %q", uploads, "hello")
	}
	if up.FileID != slacktest.FileID {
		t.Errorf("file id: got %q, want %q", up.FileID, slacktest.FileID)
	}
}
