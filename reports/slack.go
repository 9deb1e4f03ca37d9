package reports

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"reconcile"
	"reconcile/retry"
)

// How an alert gets to people: posted by a bot with the workbook shared
// beside it, posted to a webhook, or printed. What an alert says is
// message.go's business.

// Notifier delivers a message, with the workbook attached when it can.
//
// d, when not nil, says how far an earlier attempt at the same alert got,
// and Notify starts from there: a message posted before is not posted
// again, only what did not happen yet is done. As each step is done it is
// recorded in d, and saved through d.Save before the next step is tried,
// so a failure or a crash later leaves the record of what was delivered.
type Notifier interface {
	Notify(ctx context.Context, msg Message, attachment string, d *Delivery) error
}

// Delivery is an alert on its way: how far it got, and where to record
// each step as soon as it is done.
type Delivery struct {
	reconcile.Delivery
	// Save records the delivery as it now stands; nil records nothing.
	Save func(reconcile.Delivery) error
}

// done records a step: applied to d and saved. A step that could not be
// saved is an error, since an attempt after it would repeat the step.
func (d *Delivery) done(step string, apply func(*reconcile.Delivery)) error {
	apply(&d.Delivery)
	if d.Save == nil {
		return nil
	}
	if err := d.Save(d.Delivery); err != nil {
		return fmt.Errorf("%s, but recording that failed (an alert sent again would repeat it): %w", step, err)
	}
	return nil
}

// NewBotNotifier posts with a bot token and uploads the workbook beside the
// message, retrying each Slack call as policy allows. opts go to slack.New,
// e.g. slack.OptionAPIURL in tests; they should not turn on slack-go's own
// retries, which would multiply these.
func NewBotNotifier(token, channel string, policy retry.Policy, opts ...slack.Option) Notifier {
	return &botNotifier{client: slack.New(token, opts...), channel: channel, retry: policy}
}

type botNotifier struct {
	client  *slack.Client
	channel string
	retry   retry.Policy
}

// Notify posts the message and then shares the workbook, each step on its
// own retries and recorded as it is done. A delivery that got as far as
// the message resumes with the upload, shared in the channel the message
// went to.
func (n *botNotifier) Notify(ctx context.Context, msg Message, attachment string, d *Delivery) error {
	if d == nil {
		d = &Delivery{}
	}
	rt, cancel := n.retry.Start(ctx, transient)
	defer cancel()
	if !d.Posted {
		if err := n.post(rt, msg, d); err != nil {
			return err
		}
	}
	if attachment == "" || d.Uploaded {
		return nil
	}
	return n.upload(rt, attachment, d)
}

// post sends the message and records where Slack put it.
func (n *botNotifier) post(rt *retry.Run, msg Message, d *Delivery) error {
	var channelID, ts string
	err := rt.Do("chat.postMessage", func(ctx context.Context) error {
		var err error
		channelID, ts, err = n.client.PostMessageContext(ctx, n.channel,
			slack.MsgOptionBlocks(msg.Blocks...),
			slack.MsgOptionText(msg.Text, false),
			// The fallback text of notifications is plain too.
			slack.MsgOptionDisableMarkdown(),
		)
		return err
	})
	if err != nil {
		return fmt.Errorf("post slack alert to %s: %w", n.channel, redactedError{err})
	}
	return d.done("slack alert posted to "+n.channel, func(s *reconcile.Delivery) {
		s.Posted, s.Channel, s.TS = true, channelID, ts
	})
}

// upload makes the three upload steps itself rather than through
// UploadFileContext, so that each is retried on its own and a failure late
// in the upload never posts the message again.
func (n *botNotifier) upload(rt *retry.Run, attachment string, d *Delivery) error {
	fi, err := os.Stat(attachment)
	if err != nil {
		return fmt.Errorf("attach workbook: %w", err)
	}
	// files.completeUploadExternal wants a channel id, and the configured
	// channel may be a name; chat.postMessage answered with the id.
	channelID := d.Channel
	if channelID == "" {
		channelID = n.channel
	}
	name := filepath.Base(attachment)
	fail := func(err error) error {
		return fmt.Errorf("upload %s to slack %s: %w", name, n.channel, redactedError{err})
	}

	var upload *slack.GetUploadURLExternalResponse
	err = rt.Do("files.getUploadURLExternal", func(ctx context.Context) error {
		var err error
		upload, err = n.client.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{
			FileName: name,
			FileSize: int(fi.Size()),
		})
		return err
	})
	if err != nil {
		return fail(err)
	}
	// The file is opened afresh on every attempt, so a retry sends it whole.
	err = rt.Do("file upload", func(ctx context.Context) error {
		return n.client.UploadToURL(ctx, slack.UploadToURLParameters{
			UploadURL: upload.UploadURL,
			File:      attachment,
			Filename:  name,
		})
	})
	if err != nil {
		return fail(err)
	}
	err = rt.Do("files.completeUploadExternal", func(ctx context.Context) error {
		_, err := n.client.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{
			Files:   []slack.FileSummary{{ID: upload.FileID, Title: name}},
			Channel: channelID,
		})
		return err
	})
	if err != nil {
		return fail(err)
	}
	return d.done("workbook "+name+" shared in slack", func(s *reconcile.Delivery) { s.Uploaded = true })
}

// NewWebhookNotifier posts to an incoming webhook, retrying as policy
// allows. A webhook cannot carry a file, so the message names the workbook
// instead; a nil client gets one with a timeout.
func NewWebhookNotifier(url string, client *http.Client, policy retry.Policy) Notifier {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	return &webhookNotifier{url: url, client: client, retry: policy}
}

type webhookNotifier struct {
	url    string
	client *http.Client
	retry  retry.Policy
}

func (n *webhookNotifier) Notify(ctx context.Context, msg Message, attachment string, d *Delivery) error {
	if d == nil {
		d = &Delivery{}
	}
	if d.Posted {
		return nil // a webhook's message is all there is to deliver
	}
	blocks := slices.Clip(msg.Blocks)
	text := msg.Text
	if attachment != "" {
		// The name only: the path is of no use to a reader in Slack.
		note := "Workbook: " + alertValue(filepath.Base(attachment)) + " (kept with the run's outputs)"
		blocks = append(blocks, slack.NewContextBlock("", literal(note)))
		text += " (workbook " + alertValue(filepath.Base(attachment)) + ")"
	}
	wm := &slack.WebhookMessage{
		Text:   text,
		Blocks: &slack.Blocks{BlockSet: blocks},
	}
	rt, cancel := n.retry.Start(ctx, transient)
	defer cancel()
	err := rt.Do("webhook post", func(ctx context.Context) error {
		return slack.PostWebhookCustomHTTPContext(ctx, n.url, n.client, wm)
	})
	if err != nil {
		// The webhook URL is the secret, and net/http quotes it in errors.
		return fmt.Errorf("post slack webhook: %w", redactedError{err})
	}
	return d.done("slack webhook posted", func(s *reconcile.Delivery) { s.Posted = true })
}

// NewPrintNotifier writes the message as plain text to w, for runs with no
// Slack configured and for `reconcile demo`.
func NewPrintNotifier(w io.Writer) Notifier { return &printNotifier{w: w} }

type printNotifier struct{ w io.Writer }

func (n *printNotifier) Notify(_ context.Context, msg Message, attachment string, d *Delivery) error {
	if d == nil {
		d = &Delivery{}
	}
	if d.Posted {
		return nil
	}
	out := plainText(msg)
	if attachment != "" {
		out += "(workbook: " + filepath.Base(attachment) + ")\n"
	}
	if _, err := io.WriteString(n.w, out); err != nil {
		return err
	}
	return d.done("alert printed", func(s *reconcile.Delivery) { s.Posted = true })
}

var slackUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// plainText renders a message for a terminal: the header underlined, each
// section's lines, fields as "Label: value". Slack's escapes are undone,
// which is safe on a terminal because clip already took control characters
// out of every value.
func plainText(msg Message) string {
	if len(msg.Blocks) == 0 {
		return slackUnescaper.Replace(msg.Text) + "\n"
	}
	var b strings.Builder
	for _, block := range msg.Blocks {
		switch bl := block.(type) {
		case *slack.HeaderBlock:
			if bl.Text != nil {
				t := slackUnescaper.Replace(bl.Text.Text)
				b.WriteString(t + "\n" + strings.Repeat("=", utf8.RuneCountInString(t)) + "\n")
			}
		case *slack.SectionBlock:
			if bl.Text != nil {
				b.WriteString(textOf(bl.Text) + "\n")
			}
			for _, f := range bl.Fields {
				label, value, ok := strings.Cut(textOf(f), "\n")
				if ok {
					b.WriteString(label + ": " + value + "\n")
				} else {
					b.WriteString(label + "\n")
				}
			}
			b.WriteString("\n")
		case *slack.ContextBlock:
			for _, e := range bl.ContextElements.Elements {
				if t, ok := e.(*slack.TextBlockObject); ok {
					b.WriteString(textOf(t) + "\n")
				}
			}
		case *slack.DividerBlock:
			b.WriteString("----\n")
		}
	}
	return b.String()
}

// textOf is a text object for a terminal: plain text as written, mrkdwn
// without its bold marks, Slack's escapes undone in both.
func textOf(t *slack.TextBlockObject) string {
	if t.Type == slack.PlainTextType {
		return slackUnescaper.Replace(t.Text)
	}
	return plainMrkdwn(t.Text)
}

// plainMrkdwn drops the bold marks the alert puts around its titles, then
// undoes Slack's escapes.
func plainMrkdwn(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		prefix := ""
		if rest, ok := strings.CutPrefix(l, "• "); ok {
			prefix, l = "• ", rest
		}
		if strings.HasPrefix(l, "*") {
			if end := strings.Index(l[1:], "*"); end >= 0 {
				l = l[1:end+1] + l[end+2:]
			}
		}
		lines[i] = prefix + slackUnescaper.Replace(l)
	}
	return strings.Join(lines, "\n")
}

// redactedError hides secrets in the text of an error from the Slack
// client, which may quote a webhook URL or a token, while keeping the
// error itself for errors.Is and errors.As.
type redactedError struct{ err error }

func (e redactedError) Error() string { return RedactSecrets(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }
