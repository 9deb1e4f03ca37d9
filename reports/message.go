package reports

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"reconcile"
)

// What the alerts say, as Block Kit blocks and a fallback text. How a
// message gets to people is the notifiers' business (slack.go).

// Message is one alert: Block Kit blocks plus a plain-text fallback.
type Message struct {
	Text   string
	Blocks []slack.Block
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
	money, moneyText := moneyLines(res.AtRisk())
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		slack.NewSectionBlock(nil, runFields(res), nil),
		slack.NewSectionBlock(mrkdwn("*Counts*\n"+strings.Join(countLines(res), "\n")), nil, nil),
		// A local record's currency is whatever its table holds: plain text.
		slack.NewSectionBlock(literal("Money at risk\n"+strings.Join(money, "\n")), nil, nil),
	}
	disputes := disputeLine(res)
	if disputes != "" {
		blocks = append(blocks, slack.NewSectionBlock(literal(disputes), nil, nil))
	}
	payouts := payoutLines(res, top)
	if len(payouts) > 0 {
		blocks = append(blocks, slack.NewSectionBlock(literal(strings.Join(payouts, "\n")), nil, nil))
	}
	blocks = append(blocks, reviewBlocks(res, top)...)
	if len(res.StillOpen) > 0 {
		blocks = append(blocks, stillOpenBlocks(res, top)...)
	}
	text := runFallback(res, head, moneyText)
	if disputes != "" {
		text += "; " + disputes
	}
	if len(payouts) > 0 {
		text += "; " + payouts[0]
	}
	return Message{Text: text, Blocks: blocks}
}

// payoutLines say, one a line, the payouts a statement's night found not
// arrived, short or sent back, at most top of them and how many more:
// "stripe payout po_1Qx… of USD 48213.50 expected on 2026-11-30 has not
// arrived".
func payoutLines(res *reconcile.Result, top int) []string {
	var lines []string
	more := 0
	for _, f := range res.Findings {
		p := f.Payout
		if p == nil || p.ID == "" {
			continue
		}
		if len(lines) == min(max(top, 1), maxTop) {
			more++
			continue
		}
		payout := fmt.Sprintf("%s payout %s of %s %s", alertValue(p.Channel), alertValue(p.ID), letters(f.Currency),
			reconcile.FormatAmount(f.ChannelAmount, f.Currency))
		if p.Together > 1 { // a group's amounts, not its first payout's
			payout = fmt.Sprintf("%d %s payouts (%s and others) together %s %s", p.Together, alertValue(p.Channel),
				alertValue(p.ID), letters(f.Currency), reconcile.FormatAmount(f.ChannelAmount, f.Currency))
		}
		switch f.Category {
		case reconcile.PayoutMissing:
			lines = append(lines, fmt.Sprintf("%s expected on %s has not arrived", payout, p.ExpectedOn.Format(time.DateOnly)))
		case reconcile.PayoutAmountMismatch:
			lines = append(lines, fmt.Sprintf("%s arrived as %s %s", payout, letters(f.LocalCurrency),
				reconcile.FormatAmount(f.LocalAmount, f.LocalCurrency)))
		case reconcile.PayoutReturned:
			lines = append(lines, fmt.Sprintf("%s was sent back (%s %s)", payout, letters(f.LocalCurrency),
				reconcile.FormatAmount(f.LocalAmount, f.LocalCurrency)))
		}
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("and %d more %s in the workbook", more, plural(more, "payout", "payouts")))
	}
	return lines
}

// disputeLine says what the night's chargebacks did, "" when nothing:
// "2 new chargebacks (USD 149.00), 1 order refunded and charged back
// (USD 49.99)", the second the money returned past what was paid.
func disputeLine(res *reconcile.Result) string {
	var n, both int
	taken, twice := map[string]int64{}, map[string]int64{}
	for _, f := range res.Findings {
		switch {
		case f.Category == reconcile.Chargeback:
			n++
			taken[f.Currency] = reconcile.AddSaturating(taken[f.Currency], f.ChannelAmount)
		case f.Category == reconcile.OverRefund && f.Dispute != nil:
			both++
			twice[f.Currency] = reconcile.AddSaturating(twice[f.Currency], f.AtRisk())
		}
	}
	var parts []string
	if n > 0 {
		parts = append(parts, fmt.Sprintf("%d new %s (%s)", n, plural(n, "chargeback", "chargebacks"), amounts(taken)))
	}
	if both > 0 {
		parts = append(parts, fmt.Sprintf("%d %s refunded and charged back (%s)", both, plural(both, "order", "orders"), amounts(twice)))
	}
	return strings.Join(parts, ", ")
}

// amounts are sums by currency as a line says them: "USD 149.00, EUR 5.00".
func amounts(sums map[string]int64) string {
	var out []string
	for _, cur := range sortedCurrencies(sums) {
		out = append(out, letters(cur)+" "+reconcile.FormatAmount(sums[cur], cur))
	}
	return strings.Join(out, ", ")
}

// runFields are the facts of a run, the file's name among them.
func runFields(res *reconcile.Result) []*slack.TextBlockObject {
	fields := []*slack.TextBlockObject{
		field("Status", string(res.Run.Status)),
		field("Needs review", fmt.Sprint(res.NeedsReview())),
		field("Auto reversed", fmt.Sprint(res.AutoReversed())),
		field("Journals", fmt.Sprint(len(res.Journals))),
		field("Channel rows", fmt.Sprint(res.ChannelRows)),
		field("Local rows", fmt.Sprint(res.LocalRows)),
	}
	if res.Run.File != "" {
		fields = append(fields, field("File", alertValue(baseName(res.Run.File))))
	}
	return fields
}

// countLines are the counts of the categories the run found anything in.
func countLines(res *reconcile.Result) []string {
	var counts []string
	for _, c := range res.Categories() {
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
	return counts
}

// moneyLines lists the money at risk per currency twice: for the blocks,
// and for the fallback text. A local record's currency is whatever its
// table holds, and the fallback may be read as mrkdwn, so there it keeps
// only the code's letters.
func moneyLines(risk map[string]int64) (lines, text []string) {
	for _, cur := range sortedCurrencies(risk) {
		lines = append(lines, "• "+alertValue(cur)+" "+reconcile.FormatAmount(risk[cur], cur))
		text = append(text, letters(cur)+" "+reconcile.FormatAmount(risk[cur], cur))
	}
	if len(lines) == 0 {
		lines = append(lines, "• none")
	}
	return lines, text
}

// reviewBlocks lists the top findings needing review; the rest are in the
// workbook.
func reviewBlocks(res *reconcile.Result, top int) []slack.Block {
	top = min(max(top, 0), maxTop)
	shown, review := topForReview(res.Findings, top)
	if len(shown) == 0 {
		return nil
	}
	return listSection(fmt.Sprintf("*Top %d needing review*", len(shown)), itemLines(shown),
		review-len(shown), " in the workbook")
}

// stillOpenBlocks lists the findings of earlier runs still waiting for a
// decision, the longest waiting first: they are the ones most at risk of
// being forgotten, and they are in no workbook of tonight's.
func stillOpenBlocks(res *reconcile.Result, top int) []slack.Block {
	open := slices.Clone(res.StillOpen)
	slices.SortStableFunc(open, func(a, b reconcile.Finding) int { return a.OccurredAt.Compare(b.OccurredAt) })
	top = min(max(top, 0), maxTop)
	shown := open[:min(top, len(open))]
	loc := dayLocation(res.Run.Day)
	lines := make([]string, 0, len(shown))
	for _, f := range shown {
		parts := findingParts(f)
		if !f.OccurredAt.IsZero() {
			parts = append(parts, "of "+f.OccurredAt.In(loc).Format(time.DateOnly))
		}
		if f.Ref != "" {
			parts = append(parts, "ref "+alertValue(f.Ref))
		}
		lines = append(lines, "• "+strings.Join(parts, " · "))
	}
	return listSection(fmt.Sprintf("*Still open after %s*", daysText(res.StillOpenDays)), lines,
		len(open)-len(shown), "")
}

// listSection is a titled list of findings under a divider, and a line
// saying how many more there are (rest) and where (where, "" for nowhere
// to name).
func listSection(title string, lines []string, rest int, where string) []slack.Block {
	blocks := []slack.Block{
		slack.NewDividerBlock(),
		slack.NewSectionBlock(mrkdwn(title), nil, nil),
	}
	blocks = append(blocks, listBlocks(lines)...)
	if rest > 0 {
		blocks = append(blocks, slack.NewContextBlock("", mrkdwn(fmt.Sprintf("and %d more%s", rest, where))))
	}
	return blocks
}

// runFallback is the text of a run's notification. It is parsed for
// mentions too, so it carries counts and money only, nothing read from
// the file.
func runFallback(res *reconcile.Result, head string, moneyText []string) string {
	text := escapeSlack(head) + fmt.Sprintf(", %d auto reversed", res.AutoReversed())
	if len(res.StillOpen) > 0 {
		text += fmt.Sprintf(", %d still open after %s", len(res.StillOpen), daysText(res.StillOpenDays))
	}
	if status := res.Run.Status; status != reconcile.RunSucceeded && status != "" {
		text += ", status " + string(status)
	}
	if len(moneyText) > 0 {
		text += "; at risk " + strings.Join(moneyText, ", ")
	}
	return text
}

func daysText(n int) string { return fmt.Sprintf("%d %s", n, plural(n, "day", "days")) }

// OverdueMessage is the alert that the settlement file of a channel and
// date has not arrived by its deadline. Nothing has failed yet: the run
// starts when the file turns up, so the alert says that rather than asking
// for a re-run.
func OverdueMessage(channel string, day reconcile.BusinessDay, file string, deadline time.Time) Message {
	due := zoned(deadline, dayLocation(day))
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

// FetchRefusedMessage is the alert of a fetch that asking again will not
// mend: the channel refused it (bad credentials, a key without
// permission) or the job refused what it handed out. It is sent
// once; the reason is the error's words with secrets taken out.
func FetchRefusedMessage(channel string, day reconcile.BusinessDay, err error) Message {
	reason := "no reason was given"
	if err != nil {
		reason = strings.TrimSpace(ErrorText(err))
	}
	head := fmt.Sprintf("Fetch of %s %s refused", clip(channel, valueRunes), dayText(day))
	fix := fmt.Sprintf("Fix the cause (`reconcile check-config` checks the credentials), then run `reconcile fetch --channel %s --date %s`.",
		alertValue(channel), dayText(day))
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		slack.NewSectionBlock(literal("The settlement file cannot be fetched until a person acts: "+escapeSlack(clip(reason, errorRunes))), nil, nil),
		slack.NewSectionBlock(nil, []*slack.TextBlockObject{
			field("Channel", alertValue(channel)),
			field("Business date", dayText(day)),
		}, nil),
		slack.NewContextBlock("", mrkdwn(fix)),
	}
	return Message{Text: escapeSlack(head) + "; the message says why", Blocks: blocks}
}

// HeldBatchMessage is the alert of a settlement batch the fetch kept
// aside instead of filing it under a date (an Adyen batch whose date
// already holds another file, or whose rows are dated outside the
// channel's row window): nothing of it is reconciled until a person
// decides. It is sent once per batch; the reason is the error's words
// with secrets taken out.
func HeldBatchMessage(channel string, batch int64, kept string, err error) Message {
	reason := "no reason was given"
	if err != nil {
		reason = strings.TrimSpace(ErrorText(err))
	}
	head := fmt.Sprintf("Batch %d of %s held aside", batch, clip(channel, valueRunes))
	fix := fmt.Sprintf("Once the batch's file and date are right, reconcile it by hand: `reconcile run --channel %s --date YYYY-MM-DD --file FILE`.",
		alertValue(channel))
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		slack.NewSectionBlock(literal("Nothing of it was filed under a date or reconciled: "+escapeSlack(clip(reason, errorRunes))), nil, nil),
		slack.NewSectionBlock(nil, []*slack.TextBlockObject{
			field("Channel", alertValue(channel)),
			field("Batch", fmt.Sprint(batch)),
			field("Kept as", alertValue(baseName(kept))),
		}, nil),
		slack.NewContextBlock("", mrkdwn(fix)),
	}
	return Message{Text: escapeSlack(head) + "; the message says why", Blocks: blocks}
}

// NoBillMessage is the alert of a date the channel says it has no bill
// for. That is normal for a day without a payment; after a day with
// payments it means they did not reach the channel's books, or were
// booked elsewhere, which a person must look at: no run can, without a
// file.
func NoBillMessage(channel string, day reconcile.BusinessDay) Message {
	head := fmt.Sprintf("No bill from %s for %s", clip(channel, valueRunes), dayText(day))
	body := "The channel says it has no settlement bill for this date. Without one there is no run: " +
		"if our records show payments or refunds through this channel on that day, they are not in the channel's books."
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		slack.NewSectionBlock(literal(body), nil, nil),
		slack.NewSectionBlock(nil, []*slack.TextBlockObject{
			field("Channel", alertValue(channel)),
			field("Business date", dayText(day)),
		}, nil),
	}
	return Message{Text: escapeSlack(head) + ": the channel has no bill for that date", Blocks: blocks}
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

// topForReview returns the k findings needing review with the largest
// amount at risk, largest first and ties in the findings' order, and how
// many need review in all. Amounts compare in major units, exactly;
// currencies are not converted, so 5000 JPY ranks above 40.00 USD. Only
// the k are kept, in order as they come: a sorted copy of every finding
// needing review (tens of thousands on a night of chargebacks) was most
// of the alert's time.
func topForReview(fs []reconcile.Finding, k int) (top []reconcile.Finding, total int) {
	above := func(i, j int) bool { // fs[i] ranks strictly above fs[j]
		a, b := &fs[i], &fs[j]
		return compareMajor(a.AtRisk(), findingCurrency(*a), b.AtRisk(), findingCurrency(*b)) > 0
	}
	kept := make([]int, 0, k)
	for i := range fs {
		if !fs[i].NeedsReview() {
			continue
		}
		total++
		if k == 0 || len(kept) == k && !above(i, kept[k-1]) {
			continue
		}
		p := len(kept)
		for p > 0 && above(i, kept[p-1]) {
			p--
		}
		if len(kept) < k {
			kept = append(kept, 0)
		}
		copy(kept[p+1:], kept[p:len(kept)-1])
		kept[p] = i
	}
	top = make([]reconcile.Finding, len(kept))
	for n, i := range kept {
		top[n] = fs[i]
	}
	return top, total
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

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// itemLines are the lines of findings needing review, each with its hint.
func itemLines(fs []reconcile.Finding) []string {
	lines := make([]string, 0, len(fs))
	for _, f := range fs {
		line := "• " + strings.Join(findingParts(f), " · ")
		if hint := reviewHint(f); hint != "" {
			line += " — " + escapeSlack(clip(hint, hintRunes))
		}
		lines = append(lines, line)
	}
	return lines
}

// findingParts are what every list of the alert says of a finding: its
// category, the order and refund it is about, and the money at risk.
func findingParts(f reconcile.Finding) []string {
	parts := []string{string(f.Category)}
	if f.OrderNo != "" {
		parts = append(parts, "order "+alertValue(f.OrderNo))
	}
	if f.RefundNo != "" {
		parts = append(parts, "refund "+alertValue(f.RefundNo))
	}
	cur := findingCurrency(f)
	return append(parts, alertValue(cur)+" "+reconcile.FormatAmount(f.AtRisk(), cur)+" at risk")
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
