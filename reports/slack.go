package reports

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"reconcile"
)

// Message is one alert: Block Kit blocks plus a plain-text fallback.
type Message struct {
	Text   string
	Blocks []slack.Block
}

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

const (
	// valueRunes is how much of a value from a file the alert shows; the
	// workbook has it whole.
	valueRunes = 60
	// hintRunes is longer: a hint is a sentence, though it may quote the file.
	hintRunes = 120
	// errorRunes is how much of an error text a failure alert shows.
	errorRunes = 1500
	// sectionLimit keeps a section under Slack's 3000 characters.
	sectionLimit = 2900
	// maxTop bounds the listed items, which keeps the message under
	// Slack's 50 blocks whatever the caller asks for.
	maxTop = 30
)

// RunMessage is the alert of a finished run: counts, money at risk and the
// top items needing review, largest amount at risk first.
func RunMessage(res *reconcile.Result, top int) Message {
	run := res.Run
	needs := res.NeedsReview()
	head := fmt.Sprintf("Reconciliation %s %s: %d %s review",
		clip(run.Channel, valueRunes), dayText(run.Day), needs, plural(needs, "needs", "need"))
	if run.DryRun {
		head += " (dry run)"
	}

	fields := []*slack.TextBlockObject{
		field("Status", string(run.Status)),
		field("Needs review", fmt.Sprint(needs)),
		field("Auto reversed", fmt.Sprint(res.AutoReversed())),
		field("Journals", fmt.Sprint(len(res.Journals))),
		field("Channel rows", fmt.Sprint(res.ChannelRows)),
		field("Local rows", fmt.Sprint(res.LocalRows)),
	}
	if run.File != "" {
		fields = append(fields, field("File", alertValue(baseName(run.File))))
	}

	var counts []string
	for _, c := range reconcile.Categories {
		if n := res.Counts[c]; n > 0 {
			line := fmt.Sprintf("• %s: %d", c, n)
			if c == reconcile.Pending {
				// Said here because pending is in neither the review
				// count nor the money at risk, and a reader would wonder.
				line += " (waiting for the next day's file)"
			}
			counts = append(counts, line)
		}
	}
	if len(counts) == 0 {
		counts = append(counts, "• none")
	}

	risk := res.AtRisk()
	var money, moneyText []string
	for _, cur := range sortedCurrencies(risk) {
		amount := alertValue(cur) + " " + reconcile.FormatAmount(risk[cur], cur)
		money = append(money, "• "+amount)
		// A local record's currency is whatever its table holds.
		moneyText = append(moneyText, letters(cur)+" "+reconcile.FormatAmount(risk[cur], cur))
	}
	if len(money) == 0 {
		money = append(money, "• none")
	}

	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		slack.NewSectionBlock(nil, fields, nil),
		slack.NewSectionBlock(mrkdwn("*Counts*\n"+strings.Join(counts, "\n")), nil, nil),
		// A local record's currency is whatever its table holds: plain text.
		slack.NewSectionBlock(literal("Money at risk\n"+strings.Join(money, "\n")), nil, nil),
	}

	review := topForReview(res.Findings)
	if top > maxTop {
		top = maxTop
	}
	if top > 0 && len(review) > 0 {
		shown := review[:min(top, len(review))]
		blocks = append(blocks, slack.NewDividerBlock())
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(fmt.Sprintf("*Top %d needing review*", len(shown))), nil, nil))
		blocks = append(blocks, listBlocks(itemLines(shown))...)
		if rest := len(review) - len(shown); rest > 0 {
			blocks = append(blocks, slack.NewContextBlock("", mrkdwn(fmt.Sprintf("and %d more in the workbook", rest))))
		}
	}

	if len(res.StillOpen) > 0 {
		blocks = append(blocks, stillOpenBlocks(res, top)...)
	}

	// The fallback shows in notifications and is parsed for mentions too,
	// so it carries counts and money only, nothing read from the file.
	text := escapeSlack(head) + fmt.Sprintf(", %d auto reversed", res.AutoReversed())
	if len(res.StillOpen) > 0 {
		text += fmt.Sprintf(", %d still open after %s", len(res.StillOpen), daysText(res.StillOpenDays))
	}
	if run.Status != reconcile.RunSucceeded && run.Status != "" {
		text += ", status " + string(run.Status)
	}
	if len(moneyText) > 0 {
		text += "; at risk " + strings.Join(moneyText, ", ")
	}
	return Message{Text: text, Blocks: blocks}
}

// stillOpenBlocks lists the findings of earlier runs still waiting for a
// decision, the longest waiting first: they are the ones most at risk of
// being forgotten, and they are in no workbook of tonight's.
func stillOpenBlocks(res *reconcile.Result, top int) []slack.Block {
	open := slices.Clone(res.StillOpen)
	slices.SortStableFunc(open, func(a, b reconcile.Finding) int { return a.OccurredAt.Compare(b.OccurredAt) })
	top = min(max(top, 0), maxTop)
	shown := open[:min(top, len(open))]
	loc := res.Run.Day.Location
	if loc == nil {
		loc = time.UTC
	}
	lines := make([]string, 0, len(shown))
	for _, f := range shown {
		parts := []string{string(f.Category)}
		if f.OrderNo != "" {
			parts = append(parts, "order "+alertValue(f.OrderNo))
		}
		if f.RefundNo != "" {
			parts = append(parts, "refund "+alertValue(f.RefundNo))
		}
		cur := findingCurrency(f)
		parts = append(parts, alertValue(cur)+" "+reconcile.FormatAmount(f.AtRisk(), cur)+" at risk")
		if !f.OccurredAt.IsZero() {
			parts = append(parts, "of "+f.OccurredAt.In(loc).Format(time.DateOnly))
		}
		if f.Ref != "" {
			parts = append(parts, "ref "+alertValue(f.Ref))
		}
		lines = append(lines, "• "+strings.Join(parts, " · "))
	}
	blocks := []slack.Block{
		slack.NewDividerBlock(),
		slack.NewSectionBlock(mrkdwn(fmt.Sprintf("*Still open after %s*", daysText(res.StillOpenDays))), nil, nil),
	}
	blocks = append(blocks, listBlocks(lines)...)
	if rest := len(open) - len(shown); rest > 0 {
		blocks = append(blocks, slack.NewContextBlock("", mrkdwn(fmt.Sprintf("and %d more", rest))))
	}
	return blocks
}

func daysText(n int) string { return fmt.Sprintf("%d %s", n, plural(n, "day", "days")) }

// OverdueMessage is the alert that the settlement file of a channel and
// date has not arrived by its deadline. Nothing has failed yet: the run
// starts when the file turns up, so the alert says that rather than asking
// for a re-run.
func OverdueMessage(channel string, day reconcile.BusinessDay, file string, deadline time.Time) Message {
	loc := day.Location
	if loc == nil {
		loc = time.UTC
	}
	due := zoned(deadline, loc)
	if due == "" {
		due = "(no deadline)"
	}
	head := fmt.Sprintf("Settlement file %s %s overdue", clip(channel, valueRunes), dayText(day))
	name := baseName(file)
	what := "the settlement file"
	if name != "" {
		what += " " + alertValue(name)
	}
	body := fmt.Sprintf("Not arrived: %s was due by %s. The run will happen when the file arrives.", what, due)

	fields := []*slack.TextBlockObject{
		field("Channel", alertValue(channel)),
		field("Business date", dayText(day)),
		field("Deadline", due),
	}
	if name != "" {
		fields = append(fields, field("File", alertValue(name)))
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		slack.NewSectionBlock(literal(body), nil, nil),
		slack.NewSectionBlock(nil, fields, nil),
	}
	return Message{
		Text:   escapeSlack(head) + ": not arrived by " + due + "; the run will happen when it arrives",
		Blocks: blocks,
	}
}

// FailureMessage is the alert of a run that failed: why, in the error's own
// words with any secret taken out, and which channel, date and file.
func FailureMessage(run reconcile.Run, err error) Message {
	reason := run.Error
	if err != nil {
		reason = err.Error()
	}
	reason = strings.TrimSpace(RedactSecrets(reason))
	if reason == "" {
		reason = "no reason was recorded"
	}
	head := fmt.Sprintf("Reconciliation %s %s failed", clip(run.Channel, valueRunes), dayText(run.Day))
	if run.DryRun {
		head += " (dry run)"
	}

	fields := []*slack.TextBlockObject{
		field("Channel", alertValue(run.Channel)),
		field("Business date", dayText(run.Day)),
	}
	if run.File != "" {
		fields = append(fields, field("File", alertValue(baseName(run.File))))
	}
	if run.ID != "" {
		fields = append(fields, field("Run ID", alertValue(run.ID)))
	}
	retry := fmt.Sprintf("Once the cause is fixed, run `reconcile --date %s --channel %s` again.",
		dayText(run.Day), alertValue(run.Channel))

	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		slack.NewSectionBlock(literal("The run failed: "+escapeSlack(clip(reason, errorRunes))), nil, nil),
		slack.NewSectionBlock(nil, fields, nil),
		slack.NewContextBlock("", mrkdwn(retry)),
	}
	// The fallback is mrkdwn where the way it goes cannot turn that off (a
	// webhook): the reason, which may quote a file, stays in the blocks.
	return Message{
		Text:   escapeSlack(head) + "; the message says why",
		Blocks: blocks,
	}
}

// letters keeps the letters of a currency code, for a text that Slack may
// read as mrkdwn.
func letters(code string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' {
			return r
		}
		return -1
	}, code)
}

// topForReview returns the findings that need review, the largest amount
// at risk first. Amounts compare in major units, exactly; currencies are
// not converted, so 5000 JPY ranks above 40.00 USD.
func topForReview(fs []reconcile.Finding) []reconcile.Finding {
	var out []reconcile.Finding
	for _, f := range fs {
		if f.NeedsReview() {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b reconcile.Finding) int {
		return compareMajor(b.AtRisk(), findingCurrency(b), a.AtRisk(), findingCurrency(a))
	})
	return out
}

// compareMajor compares two amounts in major units without a float: the
// whole units first, then the fractions brought to the same digits.
func compareMajor(a int64, curA string, b int64, curB string) int {
	da, db := digits(curA), digits(curB)
	pa, pb := pow10(da), pow10(db)
	if c := cmp.Compare(a/pa, b/pb); c != 0 {
		return c
	}
	d := max(da, db)
	return cmp.Compare((a%pa)*pow10(d-da), (b%pb)*pow10(d-db))
}

func digits(currency string) int {
	if d, ok := reconcile.CurrencyDigits(currency); ok {
		return d
	}
	return 2 // as FormatAmount writes an unknown currency
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

func itemLines(fs []reconcile.Finding) []string {
	lines := make([]string, 0, len(fs))
	for _, f := range fs {
		parts := []string{string(f.Category)}
		if f.OrderNo != "" {
			parts = append(parts, "order "+alertValue(f.OrderNo))
		}
		if f.RefundNo != "" {
			parts = append(parts, "refund "+alertValue(f.RefundNo))
		}
		cur := findingCurrency(f)
		parts = append(parts, alertValue(cur)+" "+reconcile.FormatAmount(f.AtRisk(), cur)+" at risk")
		line := "• " + strings.Join(parts, " · ")
		if hint := reviewHint(f); hint != "" {
			line += " — " + escapeSlack(clip(hint, hintRunes))
		}
		lines = append(lines, line)
	}
	return lines
}

// listBlocks puts lines that quote a file (order numbers, hints) in
// plain-text sections, as many as they need: Slack shows plain text as
// written, where mrkdwn would turn *, _, ~ and ` from a file into
// formatting (one backtick makes the rest of the message code).
func listBlocks(lines []string) []slack.Block {
	var out []slack.Block
	cur := ""
	for _, l := range lines {
		if cur != "" && len(cur)+1+len(l) > sectionLimit {
			out = append(out, slack.NewSectionBlock(literal(cur), nil, nil))
			cur = ""
		}
		if cur != "" {
			cur += "\n"
		}
		cur += l
	}
	if cur != "" {
		out = append(out, slack.NewSectionBlock(literal(cur), nil, nil))
	}
	return out
}

// field is one label and value of a section's fields, in plain text: the
// value may be a file's name or a channel's, which mrkdwn could format.
func field(label, value string) *slack.TextBlockObject {
	return literal(label + "\n" + value)
}

// mrkdwn is verbatim so that Slack does not turn bare names or URLs into
// mentions or links on its own. It holds only the job's own words and
// numbers; text from outside goes in literal.
func mrkdwn(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, true)
}

// literal is plain text shown as written, emoji codes (":x:") included;
// its pieces from outside are escaped (escapeSlack) already.
func literal(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, text, false, false)
}

func plain(text string) *slack.TextBlockObject {
	return literal(escapeSlack(clip(text, 150)))
}

// dayText is the business date, or a placeholder when a run failed before
// it had one.
func dayText(d reconcile.BusinessDay) string {
	if d.Date.IsZero() {
		return "(no date)"
	}
	return d.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escapeSlack escapes the three characters Slack reads as markup, so a
// value cannot ping (<!channel>) or forge a link (<http://evil|click>).
func escapeSlack(s string) string { return slackEscaper.Replace(s) }

// alertValue is a value from a settlement file as the alert shows it:
// one line, cut short, escaped.
func alertValue(s string) string { return escapeSlack(clip(s, valueRunes)) }

// clip puts s on one line, drops the characters that reorder or hide text,
// and cuts it to n runes with an ellipsis.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r), reconcile.IsBidiControl(r):
			return -1
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// NewBotNotifier posts with a bot token and uploads the workbook beside the
// message, retrying each Slack call as retry allows. opts go to slack.New,
// e.g. slack.OptionAPIURL in tests; they should not turn on slack-go's own
// retries, which would multiply these.
func NewBotNotifier(token, channel string, retry Retry, opts ...slack.Option) Notifier {
	return &botNotifier{client: slack.New(token, opts...), channel: channel, retry: retry}
}

type botNotifier struct {
	client  *slack.Client
	channel string
	retry   Retry
}

// Notify makes the three upload steps itself rather than through
// UploadFileContext, so that each is retried on its own and a failure late
// in the upload never posts the message again. A delivery that got as far
// as the message resumes with the upload, shared in the channel the
// message went to.
func (n *botNotifier) Notify(ctx context.Context, msg Message, attachment string, d *Delivery) error {
	if d == nil {
		d = &Delivery{}
	}
	rt, cancel := n.retry.start(ctx)
	defer cancel()
	if !d.Posted {
		var channelID, ts string
		err := rt.do("chat.postMessage", func(ctx context.Context) error {
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
		err = d.done("slack alert posted to "+n.channel, func(s *reconcile.Delivery) {
			s.Posted, s.Channel, s.TS = true, channelID, ts
		})
		if err != nil {
			return err
		}
	}
	if attachment == "" || d.Uploaded {
		return nil
	}
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
	err = rt.do("files.getUploadURLExternal", func(ctx context.Context) error {
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
	err = rt.do("file upload", func(ctx context.Context) error {
		return n.client.UploadToURL(ctx, slack.UploadToURLParameters{
			UploadURL: upload.UploadURL,
			File:      attachment,
			Filename:  name,
		})
	})
	if err != nil {
		return fail(err)
	}
	err = rt.do("files.completeUploadExternal", func(ctx context.Context) error {
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

// NewWebhookNotifier posts to an incoming webhook, retrying as retry
// allows. A webhook cannot carry a file, so the message names the workbook
// instead; a nil client gets one with a timeout.
func NewWebhookNotifier(url string, client *http.Client, retry Retry) Notifier {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	return &webhookNotifier{url: url, client: client, retry: retry}
}

type webhookNotifier struct {
	url    string
	client *http.Client
	retry  Retry
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
	rt, cancel := n.retry.start(ctx)
	defer cancel()
	err := rt.do("webhook post", func(ctx context.Context) error {
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
