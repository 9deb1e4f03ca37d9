package reports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"reconcile"
	"reconcile/reports"
	"reconcile/reports/slacktest"
	"reconcile/retry"
)

// blockTexts returns every string in the JSON of blocks, joined by
// newlines, so a test reads what Slack would render, not JSON escapes.
func blockTexts(t *testing.T, blocksJSON []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(blocksJSON, &v); err != nil {
		t.Fatalf("blocks are not JSON: %v\n%s", err, blocksJSON)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "text" {
					if s, ok := e.(string); ok {
						out = append(out, s)
						continue
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return strings.Join(out, "\n")
}

func messageTexts(t *testing.T, msg reports.Message) string {
	t.Helper()
	b, err := json.Marshal(msg.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	return msg.Text + "\n" + blockTexts(t, b)
}

func TestRunMessage(t *testing.T) {
	res := testResult(t)
	msg := reports.RunMessage(res, 3)
	all := messageTexts(t, msg)

	t.Run("header", func(t *testing.T) {
		h, ok := msg.Blocks[0].(*slack.HeaderBlock)
		if !ok {
			t.Fatalf("first block: got %T, want a header", msg.Blocks[0])
		}
		if got, want := h.Text.Text, "Reconciliation wechatpay 2026-11-28: 8 need review"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		if !strings.HasPrefix(msg.Text, h.Text.Text) {
			t.Errorf("fallback %q does not start with the header", msg.Text)
		}
	})

	t.Run("counts and money", func(t *testing.T) {
		for _, want := range []string{
			"matched: 10", "amount_mismatch: 2", "status_mismatch: 1", "missing_local: 1",
			"missing_channel: 1", "duplicate_payment: 1", "duplicate_refund: 1", "unrecognized: 1",
			"pending: 1 (waiting for the next day's file)", "duplicate_vanished: 1",
			"Auto reversed\n1", "Needs review\n8", "Status\nSUCCEEDED",
			"CNY 1388.36", "JPY 5000", "KWD 0.234", "USD 15.00",
		} {
			if !strings.Contains(all, want) {
				t.Errorf("got no %q in\n%s", want, all)
			}
		}
	})

	t.Run("zero categories left out", func(t *testing.T) {
		res := testResult(t)
		res.Counts[reconcile.StatusMismatch] = 0
		if all := messageTexts(t, reports.RunMessage(res, 3)); strings.Contains(all, "status_mismatch: 0") {
			t.Errorf("got a zero count in\n%s", all)
		}
	})

	t.Run("top items largest first", func(t *testing.T) {
		// JPY 5000 is the largest in major units, then CNY 1234.56,
		// then CNY 99.80.
		var order []int
		for _, key := range []string{"order O-400", "order =HYPERLINK", "refund R-600"} {
			i := strings.Index(all, key)
			if i < 0 {
				t.Fatalf("got no %q in\n%s", key, all)
			}
			order = append(order, i)
		}
		if !slices.IsSorted(order) {
			t.Errorf("items out of order: positions %v in\n%s", order, all)
		}
		if strings.Contains(all, "order O-200") {
			t.Errorf("got a fourth item with top 3:\n%s", all)
		}
		if !strings.Contains(all, "and 5 more in the workbook") {
			t.Errorf("got no note of the 5 items left out:\n%s", all)
		}
	})

	t.Run("hostile value escaped", func(t *testing.T) {
		if want := "&lt;!channel&gt; see &lt;http://evil|click&gt; &amp; pay"; !strings.Contains(all, want) {
			t.Errorf("got no %q in\n%s", want, all)
		}
		for _, raw := range []string{"<!channel>", "<http://evil|click>", "& pay"} {
			if strings.Contains(all, raw) {
				t.Errorf("got raw %q in\n%s", raw, all)
			}
		}
	})

	t.Run("long value cut", func(t *testing.T) {
		res := testResult(t)
		long := strings.Repeat("长", 100)
		for i := range res.Findings {
			if res.Findings[i].OrderNo == "O-400" {
				res.Findings[i].OrderNo = long
			}
		}
		all := messageTexts(t, reports.RunMessage(res, 3))
		if want := "order " + strings.Repeat("长", 60) + "…"; !strings.Contains(all, want) {
			t.Errorf("got no value cut to 60 runes in\n%s", all)
		}
		if strings.Contains(all, strings.Repeat("长", 61)) {
			t.Errorf("got the value whole in\n%s", all)
		}
	})

	t.Run("no top items", func(t *testing.T) {
		all := messageTexts(t, reports.RunMessage(res, 0))
		if strings.Contains(all, "needing review*") {
			t.Errorf("got a top list with top 0:\n%s", all)
		}
	})
}

func TestRunMessageStillOpen(t *testing.T) {
	res := testResult(t)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 10, 0, 0, 0, time.UTC) }
	res.StillOpenDays = 3
	res.StillOpen = []reconcile.Finding{
		{
			Ref: "run-b-0002", Category: reconcile.DuplicateRefund, Kind: reconcile.KindRefund,
			OrderNo: "O-20", RefundNo: "R-20", HasChannel: true, ChannelAmount: 4500, Currency: "CNY",
			OccurredAt: day(24),
		},
		{
			Ref: "run-a-0001", Category: reconcile.MissingLocal, Kind: reconcile.KindPayment,
			OrderNo: hostileSlack, HasChannel: true, ChannelAmount: 1999, Currency: "USD",
			OccurredAt: day(23),
		},
		{
			Ref: "run-c-0007", Category: reconcile.MissingChannel, Kind: reconcile.KindPayment,
			OrderNo: strings.Repeat("长", 100), HasLocal: true, LocalAmount: 700, LocalCurrency: "JPY",
			OccurredAt: day(25),
		},
	}

	t.Run("oldest first, cut at top", func(t *testing.T) {
		all := messageTexts(t, reports.RunMessage(res, 2))
		for _, want := range []string{
			"*Still open after 3 days*",
			"• missing_local · order &lt;!channel&gt; see &lt;http://evil|click&gt; &amp; pay · USD 19.99 at risk · of 2026-11-23 · ref run-a-0001",
			"• duplicate_refund · order O-20 · refund R-20 · CNY 45.00 at risk · of 2026-11-24 · ref run-b-0002",
			"and 1 more",
			"3 still open after 3 days",
		} {
			if !strings.Contains(all, want) {
				t.Errorf("got no %q in\n%s", want, all)
			}
		}
		if a, b := strings.Index(all, "run-a-0001"), strings.Index(all, "run-b-0002"); a > b {
			t.Errorf("the older run-a-0001 listed after run-b-0002:\n%s", all)
		}
		if strings.Contains(all, "run-c-0007") {
			t.Errorf("got a third still-open item with top 2:\n%s", all)
		}
		if strings.Contains(all, "<!channel>") {
			t.Errorf("got a raw <!channel> in\n%s", all)
		}
	})

	t.Run("all shown, long value cut", func(t *testing.T) {
		all := messageTexts(t, reports.RunMessage(res, 5))
		if want := "order " + strings.Repeat("长", 60) + "… · JPY 700 at risk · of 2026-11-25 · ref run-c-0007"; !strings.Contains(all, want) {
			t.Errorf("got no %q in\n%s", want, all)
		}
		if strings.Contains(all, "and 1 more\n") || strings.Contains(all, strings.Repeat("长", 61)) {
			t.Errorf("got a note of more, or the value whole, in\n%s", all)
		}
	})

	t.Run("one day", func(t *testing.T) {
		res := testResult(t)
		res.StillOpenDays = 1
		res.StillOpen = res.Findings[:1]
		all := messageTexts(t, reports.RunMessage(res, 5))
		if !strings.Contains(all, "*Still open after 1 day*") {
			t.Errorf("got no singular day in\n%s", all)
		}
	})

	t.Run("none still open", func(t *testing.T) {
		all := messageTexts(t, reports.RunMessage(testResult(t), 5))
		if strings.Contains(all, "Still open") || strings.Contains(all, "still open") {
			t.Errorf("got a still-open section with nothing open:\n%s", all)
		}
	})

	t.Run("pending not counted as review", func(t *testing.T) {
		res := testResult(t)
		all := messageTexts(t, reports.RunMessage(res, 30))
		if strings.Contains(all, "*pending*") {
			t.Errorf("a pending finding is listed for review:\n%s", all)
		}
	})
}

func TestOverdueMessage(t *testing.T) {
	day, err := reconcile.NewBusinessDay("2026-11-28", shanghai)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC) // 10:00 in Shanghai
	msg := reports.OverdueMessage("wechatpay", day, "/data/in/wechatpay/<!here>&2026-11-28.csv", deadline)
	all := messageTexts(t, msg)

	h, ok := msg.Blocks[0].(*slack.HeaderBlock)
	if !ok {
		t.Fatalf("first block: got %T, want a header", msg.Blocks[0])
	}
	if got, want := h.Text.Text, "Settlement file wechatpay 2026-11-28 overdue"; got != want {
		t.Errorf("header: got %q, want %q", got, want)
	}
	for _, want := range []string{
		"Not arrived: the settlement file &lt;!here&gt;&amp;2026-11-28.csv was due by 2026-11-29 10:00:00 +08:00.",
		"The run will happen when the file arrives.",
		"Channel\nwechatpay", "Business date\n2026-11-28", "Deadline\n2026-11-29 10:00:00 +08:00",
		"File\n&lt;!here&gt;&amp;2026-11-28.csv",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("got no %q in\n%s", want, all)
		}
	}
	for _, leak := range []string{"/data/in", "<!here>"} {
		if strings.Contains(all, leak) {
			t.Errorf("got %q in\n%s", leak, all)
		}
	}
	if want := "Settlement file wechatpay 2026-11-28 overdue: not arrived by 2026-11-29 10:00:00 +08:00; the run will happen when it arrives"; msg.Text != want {
		t.Errorf("fallback: got %q, want %q", msg.Text, want)
	}

	t.Run("hostile channel", func(t *testing.T) {
		all := messageTexts(t, reports.OverdueMessage("<!channel>", day, "", deadline))
		if strings.Contains(all, "<!channel>") || !strings.Contains(all, "&lt;!channel&gt;") {
			t.Errorf("channel not escaped in\n%s", all)
		}
		if strings.Contains(all, "*File*") {
			t.Errorf("got a File field with no file in\n%s", all)
		}
	})
}

func TestFailureMessage(t *testing.T) {
	res := testResult(t)
	run := res.Run
	run.Status = reconcile.RunFailed
	err := fmt.Errorf("load local records: connect postgres://recon:hunter2@db:5432/recon (token xoxb-1234-5678-abcdef): %w",
		&reconcile.ParseError{File: "2026-11-28.csv", Line: 12, Column: "amount", Err: errors.New(`"<!here>": not a plain decimal amount`)})
	msg := reports.FailureMessage(run, err)
	all := messageTexts(t, msg)
	for _, want := range []string{
		"Reconciliation wechatpay 2026-11-28 failed", "postgres://recon:xxxxx@db", "xoxb-REDACTED",
		"2026-11-28.csv:12: column amount", "&lt;!here&gt;", "File\n2026-11-28.csv", "Run ID\nrun-1",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("got no %q in\n%s", want, all)
		}
	}
	for _, leak := range []string{"hunter2", "xoxb-1234", "<!here>", "/data/in"} {
		if strings.Contains(all, leak) {
			t.Errorf("got %q in\n%s", leak, all)
		}
	}
	// The fallback may be read as mrkdwn (a webhook's): the reason, which
	// quotes the file, is in the blocks only.
	if msg.Text != "Reconciliation wechatpay 2026-11-28 failed; the message says why" {
		t.Errorf("fallback: got %q", msg.Text)
	}
}

// noWait is a retry policy for tests that are not about waiting.
func noWait() retry.Policy {
	return retry.Policy{Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}
}

func TestBotNotifier(t *testing.T) {
	res := testResult(t)
	workbook := filepath.Join(t.TempDir(), reports.WorkbookName(res.Run.Channel, res.Run.Day))
	if err := reports.WriteWorkbook(workbook, res); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(workbook)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("message then workbook", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		n := reports.NewBotNotifier("xoxb-test-token", "#payments-ops", retry.Policy{}, srv.Option())
		if err := n.Notify(context.Background(), reports.RunMessage(res, 5), workbook, nil); err != nil {
			t.Fatalf("Notify: %v", err)
		}
		calls := srv.Calls()
		var paths []string
		for _, c := range calls {
			paths = append(paths, c.Path)
		}
		wantPaths := []string{slacktest.PostMessage, slacktest.GetUploadURL, slacktest.Upload, slacktest.CompleteUpload}
		if !slices.Equal(paths, wantPaths) {
			t.Fatalf("calls: got %q, want %q", paths, wantPaths)
		}

		post := calls[0].Form
		if got, want := post["channel"], "#payments-ops"; got != want {
			t.Errorf("post channel: got %q, want %q", got, want)
		}
		blocks := blockTexts(t, []byte(post["blocks"]))
		for _, s := range []string{"8 need review", "amount_mismatch: 2", "CNY 1388.36", "&lt;!channel&gt;"} {
			if !strings.Contains(blocks, s) {
				t.Errorf("got no %q in the posted blocks\n%s", s, blocks)
			}
		}
		if strings.Contains(blocks, "<!channel>") || strings.Contains(post["text"], "<!channel>") {
			t.Errorf("got a raw <!channel> in the posted message")
		}
		if !strings.HasPrefix(post["text"], "Reconciliation wechatpay 2026-11-28") {
			t.Errorf("fallback text: got %q", post["text"])
		}

		get := calls[1].Form
		if got, want := get["filename"], "review-wechatpay-2026-11-28.xlsx"; got != want {
			t.Errorf("upload filename: got %q, want %q", got, want)
		}
		if got, want := get["length"], fmt.Sprint(len(want)); got != want {
			t.Errorf("upload length: got %q, want %q", got, want)
		}

		if !bytes.Equal(calls[2].Body, want) {
			t.Errorf("uploaded %d bytes, want the workbook's %d bytes exactly", len(calls[2].Body), len(want))
		}

		done := calls[3].Form
		var files []map[string]any
		if err := json.Unmarshal([]byte(done["files"]), &files); err != nil {
			t.Fatalf("files: %v in %q", err, done["files"])
		}
		if len(files) != 1 || files[0]["id"] != slacktest.FileID || files[0]["title"] != "review-wechatpay-2026-11-28.xlsx" {
			t.Errorf("files: got %v, want F123 titled with the workbook name", files)
		}
		// The id chat.postMessage answered with, not the configured name.
		if got, want := done["channel_id"], slacktest.ChannelID; got != want {
			t.Errorf("channel_id: got %q, want %q", got, want)
		}
	})

	t.Run("no attachment", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		n := reports.NewBotNotifier("xoxb-test-token", "C123", retry.Policy{}, srv.Option())
		if err := n.Notify(context.Background(), reports.RunMessage(res, 5), "", nil); err != nil {
			t.Fatalf("Notify: %v", err)
		}
		if got := len(srv.Calls()); got != 1 {
			t.Errorf("calls: got %d, want only chat.postMessage", got)
		}
	})

	t.Run("slack error", func(t *testing.T) {
		srv := slacktest.NewServer(t)
		srv.Always(slacktest.PostMessage, slacktest.Reply{Error: "channel_not_found"})
		n := reports.NewBotNotifier("xoxb-test-token", "#nowhere", noWait(), srv.Option())
		err := n.Notify(context.Background(), reports.RunMessage(res, 5), workbook, nil)
		if err == nil || !strings.Contains(err.Error(), "channel_not_found") {
			t.Fatalf("got %v, want an error naming channel_not_found", err)
		}
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) {
			t.Errorf("got %T, want a slack.SlackErrorResponse inside", err)
		}
		if got := len(srv.Calls()); got != 1 {
			t.Errorf("calls: got %d, want no upload after a failed post", got)
		}
	})
}

func TestWebhookNotifier(t *testing.T) {
	res := testResult(t)
	srv := slacktest.NewServer(t)
	n := reports.NewWebhookNotifier(srv.WebhookURL(), nil, retry.Policy{})
	workbook := "/var/lib/reconcile/out/review-wechatpay-2026-11-28.xlsx"
	if err := n.Notify(context.Background(), reports.RunMessage(res, 5), workbook, nil); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	posts := srv.OK(slacktest.Webhook)
	if len(posts) != 1 {
		t.Fatalf("webhook posts: got %d, want 1", len(posts))
	}
	raw := posts[0].Body
	var got slack.WebhookMessage
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("body: %v", err)
	}
	if got.Blocks == nil || len(got.Blocks.BlockSet) == 0 {
		t.Fatalf("got no blocks in %s", raw)
	}
	blocksJSON, err := json.Marshal(got.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	all := got.Text + "\n" + blockTexts(t, blocksJSON)
	for _, want := range []string{"8 need review", "amount_mismatch: 2", "review-wechatpay-2026-11-28.xlsx", "&lt;!channel&gt;"} {
		if !strings.Contains(all, want) {
			t.Errorf("got no %q in\n%s", want, all)
		}
	}
	if strings.Contains(all, "/var/lib") {
		t.Errorf("got the workbook's local path in\n%s", all)
	}

	t.Run("error hides the url", func(t *testing.T) {
		offline := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return nil, errors.New("network is unreachable")
		})}
		n := reports.NewWebhookNotifier("https://hooks.slack.com/services/T0/B0/secret", offline, noWait())
		err := n.Notify(context.Background(), reports.RunMessage(res, 5), "", nil)
		if err == nil {
			t.Fatal("got no error with the network down")
		}
		if strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "network is unreachable") {
			t.Errorf("got %q, want the cause without the webhook secret", err)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestPrintNotifier(t *testing.T) {
	res := testResult(t)
	var b strings.Builder
	n := reports.NewPrintNotifier(&b)
	if err := n.Notify(context.Background(), reports.RunMessage(res, 3), "/tmp/out/review-wechatpay-2026-11-28.xlsx", nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Reconciliation wechatpay 2026-11-28: 8 need review\n=====",
		"Status: SUCCEEDED", "Needs review: 8", "Auto reversed: 1",
		"Counts\n• matched: 10\n• amount_mismatch: 2",
		"• pending: 1 (waiting for the next day's file)\n• duplicate_vanished: 1",
		"Money at risk\n• CNY 1388.36\n• JPY 5000\n• KWD 0.234\n• USD 15.00",
		"• missing_channel · order O-400 · JPY 5000 at risk",
		"(workbook: review-wechatpay-2026-11-28.xlsx)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("got no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "&lt;") || strings.Contains(out, "/tmp/out") {
		t.Errorf("got Slack escapes or the local path in\n%s", out)
	}
}

func TestRedactSecrets(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"postgres url", "dial postgres://recon:hunter2@db:5432/recon failed", "dial postgres://recon:xxxxx@db:5432/recon failed"},
		{"postgresql url", `open "postgresql://app:p4ss@10.0.0.1/db?sslmode=require"`, `open "postgresql://app:xxxxx@10.0.0.1/db?sslmode=require"`},
		{"at sign in password", "postgres://u:p@ss@host/db", "postgres://u:xxxxx@host/db"},
		{"url without password", "postgres://recon@db/recon", "postgres://recon@db/recon"},
		{"url without user", "postgres://db:5432/recon", "postgres://db:5432/recon"},
		{"key value", "host=db user=recon password=hunter2 dbname=recon", "host=db user=recon password=xxxxx dbname=recon"},
		{"quoted key value", "host=db password='hunter 2' dbname=recon", "host=db password=xxxxx dbname=recon"},
		{"query parameter", "postgres://db/recon?user=a&password=hunter2&sslmode=disable", "postgres://db/recon?user=a&password=xxxxx&sslmode=disable"},
		{"bot token", "auth xoxb-123456-789012-AbCdEf failed", "auth xoxb-REDACTED failed"},
		{"user token", "xoxp-1-2-3-abc", "xoxp-REDACTED"},
		{"app token", "xapp-1-A0-123-abc", "xapp-REDACTED"},
		{"webhook url", `Post "https://hooks.slack.com/services/T0/B0/XyZ": timeout`, `Post "https://hooks.slack.com/services/REDACTED": timeout`},
		{"slash in password", "postgres://u:pa/ss?#w@host/db failed", "postgres://u:xxxxx@host/db failed"},
		{"url in a quoted field", `dsn="postgres://u:pw@h/db" user="a@b"`, `dsn="postgres://u:xxxxx@h/db" user="a@b"`},
		{"sslpassword", "host=db sslpassword=hunter2 sslmode=verify-full", "host=db sslpassword=xxxxx sslmode=verify-full"},
		{"environment variable", "PGPASSWORD=hunter2 psql", "PGPASSWORD=xxxxx psql"},
		{"json password", `{"user":"recon","db_password": "hunter2"}`, `{"user":"recon","db_password": "xxxxx"}`},
		{"refresh token", "xoxe.xoxp-1-abc", "xoxe.xoxp-REDACTED"},
		{"workflow webhook", "https://hooks.slack.com/workflows/T0/A0/123/abc", "https://hooks.slack.com/workflows/REDACTED"},
		{"stripe secret key", "stripe: invalid api key sk_live_51AbC9xYz provided", "stripe: invalid api key sk_live_REDACTED provided"},
		{"stripe restricted key", "key rk_test_4eC39HqLyjWDarjtT1zdp7dc", "key rk_test_REDACTED"},
		{"pem private key", "key -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY----- bad", "key -----BEGIN PRIVATE KEY----- REDACTED bad"},
		{"rsa key cut off", "parse -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA", "parse -----BEGIN RSA PRIVATE KEY----- REDACTED"},
		{"basic auth", "Authorization: Basic cmVwb3J0QENvbXBhbnk6aHVudGVyMg==", "Authorization: Basic REDACTED"},
		{"bearer", "Authorization: Bearer sk_test_abcdefgh", "Authorization: Bearer REDACTED"},
		{"wechatpay authorization", `WECHATPAY2-SHA256-RSA2048 mchid="1900000001",nonce_str="abc",signature="c2lnbmF0dXJl"`, "WECHATPAY2-SHA256-RSA2048 REDACTED"},
		{"nothing secret", "wechatpay 2026-11-28.csv:12: column amount: bad", "wechatpay 2026-11-28.csv:12: column amount: bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reports.RedactSecrets(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFetchMessages: a refused fetch says why with the secret hidden and
// the channel's words unable to mention anyone; a missing bill says what
// it may mean.
func TestFetchMessages(t *testing.T) {
	day, err := reconcile.NewBusinessDay("2026-11-28", shanghai)
	if err != nil {
		t.Fatal(err)
	}
	refusal := errors.New(`fetch stripe 2026-11-28: refused by the channel (HTTP 401): "<!channel> key sk_live_51AbCdEfGh invalid"`)
	all := messageTexts(t, reports.FetchRefusedMessage("stripe", day, refusal))
	for _, want := range []string{"Fetch of stripe 2026-11-28 refused", "cannot be fetched until a person acts",
		"HTTP 401", "sk_live_REDACTED", "&lt;!channel&gt;", "reconcile fetch --channel stripe --date 2026-11-28"} {
		if !strings.Contains(all, want) {
			t.Errorf("refused: got no %q in\n%s", want, all)
		}
	}
	for _, leak := range []string{"51AbCdEfGh", "<!channel>"} {
		if strings.Contains(all, leak) {
			t.Errorf("refused: got %q in\n%s", leak, all)
		}
	}
	held := errors.New(`fetch adyen batch 414: held aside: batch 414 belongs to 2026-11-28, which already holds batch 413: kept as /var/lib/reconcile/inbox/adyen_2026-11-28.csv.batch-414 *not* reconciled`)
	all = messageTexts(t, reports.HeldBatchMessage("adyen", 414, "/var/lib/reconcile/inbox/adyen_2026-11-28.csv.batch-414", held))
	for _, want := range []string{"Batch 414 of adyen held aside", "Nothing of it was filed under a date or reconciled",
		"already holds batch 413", "Kept as\nadyen_2026-11-28.csv.batch-414", "reconcile run --channel adyen"} {
		if !strings.Contains(all, want) {
			t.Errorf("held: got no %q in\n%s", want, all)
		}
	}
	all = messageTexts(t, reports.NoBillMessage("wechatpay", day))
	for _, want := range []string{"No bill from wechatpay for 2026-11-28", "not in the channel's books", "Business date\n2026-11-28"} {
		if !strings.Contains(all, want) {
			t.Errorf("no bill: got no %q in\n%s", want, all)
		}
	}
}
