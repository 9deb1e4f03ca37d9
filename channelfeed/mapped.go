package channelfeed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/transform"

	"reconcile"
)

// mappedParser reads the CSV of a channel that has no parser of its own,
// through the Mapping in the channel's config, so a new channel needs a
// config entry rather than code. It is as strict as the canonical CSV:
// anything the mapping does not account for stops the file.
type mappedParser struct{}

var _ Parser = mappedParser{}

// Mapping describes a channel's CSV: which column holds which field and how
// the channel writes kinds, statuses, amounts, times and text. It is the
// "mapping" object of a channel in the config file; unknown keys are
// refused, because a misspelt option (say "amount_unit") would otherwise be
// ignored and the file read with the wrong default. Call Validate when the
// config is loaded; the parser validates it again before reading.
type Mapping struct {
	// Columns names the header of each field.
	Columns MappedColumns `json:"columns"`
	// Currency is the ISO 4217 code of every row, for files without a
	// currency column. Set it or columns.currency, not both.
	Currency string `json:"currency,omitempty"`
	// Kinds lists, under "payment", "refund", "batch", "chargeback",
	// "chargeback_reversal", "second_chargeback", "refund_reversal" and
	// "payout", the values of the kind column that mean each. Values
	// match after trimming, ignoring case. A value not listed makes a row
	// of kind other, kept for review; an empty cell is an error unless ""
	// is listed. Batch rows (fees, payouts) are counted, never matched;
	// a "payout" row is a batch row that also states what its payout
	// (columns.payout) sends to the bank.
	Kinds map[string][]string `json:"kinds"`
	// Statuses lists, under "success", "processing" and "failed", the
	// values of the status column that mean each, matched like Kinds. With
	// a status column every value must be listed ("" for an empty cell);
	// without one every row is a success.
	Statuses map[string][]string `json:"statuses,omitempty"`
	// AmountUnits is "major" (default: decimals such as "12.50") or
	// "minor" (whole minor units such as "1250"). Fees use the same units.
	AmountUnits string `json:"amount_units,omitempty"`
	// Sign says how the amounts of payments, refunds, chargebacks and
	// reversals carry their direction: "unsigned" (default: no sign
	// allowed), "signed" (payments and reversals ≥ 0, refunds and
	// chargebacks of either round ≤ 0; the sign is checked against the
	// kind, then dropped) or "any" (the sign is dropped unchecked). Batch
	// rows and rows of kind other are read as absolute values whatever
	// this says; a payout row is negative, whatever this says, only when
	// the channel debits the account.
	Sign string `json:"sign,omitempty"`
	// FeeSign says how the channel writes a fee it charged: "positive"
	// (default) or "negative" (deducted, like Alipay's 服务费). A fee of
	// the other sign is a fee returned.
	FeeSign string `json:"fee_sign,omitempty"`
	// TimeFormat is "rfc3339" (default; an offset is optional), "unix"
	// (whole seconds), "unix_ms" (whole milliseconds) or a Go layout
	// written with the reference time, such as "02.01.2006 15:04".
	TimeFormat string `json:"time_format,omitempty"`
	// PayoutDateFormat is how columns.payout_date is written: any form
	// TimeFormat takes. Default "2006-01-02"; the date is the one of the
	// time in TimeZone.
	PayoutDateFormat string `json:"payout_date_format,omitempty"`
	// TimeZone is the IANA zone of times written without an offset.
	// Default: the channel's business time zone.
	TimeZone string `json:"time_zone,omitempty"`
	// Encoding is the file's character set: "utf-8" (default; a byte
	// order mark is dropped), "gbk", "gb18030", "latin1" (or
	// "iso-8859-1") or "windows-1252".
	Encoding string `json:"encoding,omitempty"`
	// Delimiter is the field separator, one character such as ";" or "|";
	// "\t" or "tab" for tab-separated files. Default ",".
	Delimiter string `json:"delimiter,omitempty"`
	// SkipLines is the number of lines before the header (a title, the
	// account, the period). Line numbers in errors still count them.
	SkipLines int `json:"skip_lines,omitempty"`
	// Trim lists characters stripped from both ends of every field and
	// header name, such as "`" for channels that pad ids against
	// spreadsheet mangling. White space is always stripped.
	Trim string `json:"trim,omitempty"`
}

// MappedColumns names the header of each canonical field. Names match
// after trimming, ignoring case. Two fields may name the same column.
type MappedColumns struct {
	Kind         string `json:"kind"`                 // required: the row's kind, see Mapping.Kinds
	OrderNo      string `json:"order_no"`             // required: our order number; may be empty on refunds and a dispute's events
	RefundNo     string `json:"refund_no,omitempty"`  // our refund number; required when kinds lists refunds
	ChannelTxnID string `json:"channel_txn_id"`       // required: the channel's id of the row; may be empty on rows but payments and refunds
	Amount       string `json:"amount"`               // required
	Currency     string `json:"currency,omitempty"`   // required unless Mapping.Currency is set
	OccurredAt   string `json:"occurred_at"`          // required
	Fee          string `json:"fee,omitempty"`        // optional; an empty cell is no fee
	Status       string `json:"status,omitempty"`     // optional, see Mapping.Statuses
	DisputeID    string `json:"dispute_id,omitempty"` // optional, on a dispute's events; empty: the channel_txn_id
	PaymentID    string `json:"payment_id,omitempty"` // optional, on a dispute's events and refund reversals: the channel's id of their payment
	Reason       string `json:"reason,omitempty"`     // optional, on a dispute's events: the scheme's reason
	// Payout is the channel's id of the payout a row was paid out in;
	// required when kinds lists payout.
	Payout string `json:"payout,omitempty"`
	// PayoutDate is the date a row's payout is expected at the bank
	// (Mapping.PayoutDateFormat).
	PayoutDate string `json:"payout_date,omitempty"`
}

// UnmarshalJSON refuses unknown keys whatever decoder reads the config.
func (m *Mapping) UnmarshalJSON(b []byte) error {
	type plain Mapping
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode((*plain)(m)); err != nil {
		return fmt.Errorf("mapping: %w", err)
	}
	return nil
}

// Validate checks the mapping without reading a file, so a config can be
// refused when it is loaded rather than at 03:00. It reports every problem
// it finds, not only the first.
func (m *Mapping) Validate() error {
	_, err := m.compile(time.UTC)
	return err
}

// Fields of a mapped row, in the order of mappedNames.
const (
	mKind = iota
	mOrderNo
	mRefundNo
	mChannelTxnID
	mAmount
	mCurrency
	mOccurredAt
	mFee
	mStatus
	mDisputeID
	mPaymentID
	mReason
	mPayout
	mPayoutDate
	mFields
)

// mappedNames are the JSON keys of MappedColumns, used in messages so a
// user can find the setting to change.
var mappedNames = [mFields]string{"kind", "order_no", "refund_no", "channel_txn_id", "amount", "currency", "occurred_at", "fee", "status",
	"dispute_id", "payment_id", "reason", "payout", "payout_date"}

func (c MappedColumns) names() [mFields]string {
	return [mFields]string{c.Kind, c.OrderNo, c.RefundNo, c.ChannelTxnID, c.Amount, c.Currency, c.OccurredAt, c.Fee, c.Status,
		c.DisputeID, c.PaymentID, c.Reason, c.Payout, c.PayoutDate}
}

// Time formats besides a Go layout.
const (
	timeRFC3339 = "rfc3339"
	timeUnix    = "unix"
	timeUnixMs  = "unix_ms"
)

// Values of Mapping.Sign.
const (
	signUnsigned = "unsigned"
	signSigned   = "signed"
	signAny      = "any"
)

// mappedEncodings are the character sets a mapping may name; nil is UTF-8,
// read as is.
var mappedEncodings = map[string]encoding.Encoding{
	"utf-8":        nil,
	"utf8":         nil,
	"gbk":          simplifiedchinese.GBK,
	"gb18030":      simplifiedchinese.GB18030,
	"latin1":       charmap.ISO8859_1,
	"iso-8859-1":   charmap.ISO8859_1,
	"windows-1252": charmap.Windows1252,
	"cp1252":       charmap.Windows1252,
}

// mappedPlan is a validated Mapping in the form the parser uses.
type mappedPlan struct {
	names     [mFields]string // configured header names, "" when unmapped
	currency  string          // fixed currency, "" when read from a column
	kinds     map[string]reconcile.Kind
	statuses  map[string]reconcile.TxnStatus
	statusSet string // the listed status values, for messages
	minor     bool
	sign      string
	feeNeg    bool
	timeFmt   string // timeRFC3339, timeUnix, timeUnixMs or a layout
	dateFmt   string // payout_date's, as timeFmt
	loc       *time.Location
	enc       encoding.Encoding
	encName   string
	delim     rune
	skip      int
	trim      string
}

// matchKey is how kind and status values are compared: the channels that
// change the case of their own words between exports are not rare.
func matchKey(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}

// mappedKinds and mappedStatuses are the names Mapping.Kinds and
// Mapping.Statuses list their values under.
var (
	mappedKinds = map[string]reconcile.Kind{
		"payment":             reconcile.KindPayment,
		"refund":              reconcile.KindRefund,
		"batch":               reconcile.KindBatch,
		"chargeback":          reconcile.KindChargeback,
		"chargeback_reversal": reconcile.KindChargebackReversal,
		"second_chargeback":   reconcile.KindSecondChargeback,
		"refund_reversal":     reconcile.KindRefundReversal,
		// A payout's own row: a batch row once read (mappedFile.row).
		"payout": reconcile.KindPayout,
	}
	mappedStatuses = map[string]reconcile.TxnStatus{
		"success":    reconcile.StatusSuccess,
		"processing": reconcile.StatusProcessing,
		"failed":     reconcile.StatusFailed,
	}
)

// problems collects what is wrong with a mapping, so that Validate
// reports every problem, not only the first.
type problems []string

func (ps *problems) addf(format string, args ...any) {
	*ps = append(*ps, fmt.Sprintf(format, args...))
}

// compile checks the mapping and builds its plan; loc is the zone of
// naive times when the mapping names none.
func (m *Mapping) compile(loc *time.Location) (*mappedPlan, error) {
	if m == nil {
		return nil, errors.New(`format "mapped" needs a "mapping" object in the channel's config`)
	}
	var bad problems
	p := &mappedPlan{loc: loc, currency: strings.TrimSpace(m.Currency), trim: m.Trim, skip: m.SkipLines}
	p.compileColumns(m, &bad)
	p.compileKinds(m, &bad)
	p.compileStatuses(m, &bad)
	p.compileNumbers(m, &bad)
	p.compileTimes(m, &bad)
	p.compileText(m, &bad)
	if len(bad) > 0 {
		return nil, fmt.Errorf("mapping: %s", strings.Join(bad, "; "))
	}
	return p, nil
}

// compileColumns reads columns and currency.
func (p *mappedPlan) compileColumns(m *Mapping, bad *problems) {
	for i, name := range m.Columns.names() {
		p.names[i] = strings.TrimSpace(name)
		if name != "" && p.names[i] == "" {
			bad.addf("columns.%s is blank", mappedNames[i])
		}
	}
	for _, f := range []int{mKind, mOrderNo, mChannelTxnID, mAmount, mOccurredAt} {
		if p.names[f] == "" {
			bad.addf("columns.%s is required", mappedNames[f])
		}
	}
	switch {
	case p.names[mCurrency] == "" && p.currency == "":
		bad.addf("set columns.currency, or currency for a file in one currency")
	case p.names[mCurrency] != "" && p.currency != "":
		bad.addf("set columns.currency or currency, not both")
	case p.currency != "":
		if _, ok := reconcile.CurrencyDigits(p.currency); !ok {
			bad.addf("currency %s is not a known ISO 4217 code", reconcile.Quote(p.currency))
		}
	}
}

func (p *mappedPlan) compileKinds(m *Mapping, bad *problems) {
	p.kinds = compileTable(bad, "kinds", "kind", m.Kinds, mappedKinds,
		"payment, refund, batch, chargeback, chargeback_reversal, second_chargeback, refund_reversal or payout; unlisted values are kept as other", nil)
	listed := map[reconcile.Kind]int{}
	for _, kind := range p.kinds {
		listed[kind]++
	}
	if listed[reconcile.KindPayment] == 0 && listed[reconcile.KindRefund] == 0 {
		bad.addf("kinds: list the values of columns.kind that mean payment and refund")
	}
	if listed[reconcile.KindRefund] > 0 && p.names[mRefundNo] == "" {
		bad.addf("columns.refund_no is required when kinds lists refunds")
	}
	if listed[reconcile.KindPayout] > 0 && p.names[mPayout] == "" {
		bad.addf("columns.payout is required when kinds lists payout")
	}
	if p.names[mPayoutDate] != "" && p.names[mPayout] == "" {
		bad.addf("columns.payout_date is set but columns.payout is not")
	}
}

func (p *mappedPlan) compileStatuses(m *Mapping, bad *problems) {
	switch {
	case p.names[mStatus] != "" && len(m.Statuses) == 0:
		bad.addf("columns.status is set but statuses is empty: list the values meaning success, processing and failed")
	case p.names[mStatus] == "" && len(m.Statuses) > 0:
		bad.addf("statuses is set but columns.status is not")
	}
	var words []string
	p.statuses = compileTable(bad, "statuses", "status", m.Statuses, mappedStatuses, "success, processing or failed", &words)
	p.statusSet = strings.Join(words, ", ")
}

// compileTable reads the kinds or the statuses of a mapping, the setting
// key: lists holds, under each name of meanings, the values that mean
// it. It returns the table of the values by matchKey; words, unless nil,
// gets the values as listed, quoted, for messages. Names are read in
// sorted order, so the problems are told in the same order on every run.
func compileTable[V ~string](bad *problems, key, what string, lists map[string][]string, meanings map[string]V, want string, words *[]string) map[string]V {
	table := map[string]V{}
	for _, name := range slices.Sorted(maps.Keys(lists)) {
		meaning, ok := meanings[name]
		if !ok {
			bad.addf("%s: unknown %s %s (want %s)", key, what, reconcile.Quote(name), want)
			continue
		}
		for _, v := range lists[name] {
			k := matchKey(v)
			if prev, ok := table[k]; ok {
				bad.addf("%s: %s is listed under both %s and %s", key, reconcile.Quote(v), prev, meaning)
				continue
			}
			table[k] = meaning
			if words != nil {
				*words = append(*words, reconcile.Quote(strings.TrimSpace(v)))
			}
		}
	}
	return table
}

// compileNumbers reads amount_units, sign and fee_sign.
func (p *mappedPlan) compileNumbers(m *Mapping, bad *problems) {
	p.minor = bad.choice("amount_units", m.AmountUnits, "major", "minor") == "minor"
	p.sign = bad.choice("sign", m.Sign, signUnsigned, signSigned, signAny)
	p.feeNeg = bad.choice("fee_sign", m.FeeSign, "positive", "negative") == "negative"
}

// choice returns the setting's value, the first of want when it is
// empty, or tells what it may be and returns "".
func (ps *problems) choice(setting, v string, want ...string) string {
	if v == "" {
		return want[0]
	}
	if slices.Contains(want, v) {
		return v
	}
	quoted := make([]string, len(want))
	for i, w := range want {
		quoted[i] = `"` + w + `"`
	}
	last := len(quoted) - 1
	ps.addf("%s %s: want %s", setting, reconcile.Quote(v), strings.Join(quoted[:last], ", ")+" or "+quoted[last])
	return ""
}

// compileTimes reads time_format, payout_date_format and time_zone.
func (p *mappedPlan) compileTimes(m *Mapping, bad *problems) {
	p.timeFmt = bad.timeFormat("time_format", m.TimeFormat, timeRFC3339)
	p.dateFmt = bad.timeFormat("payout_date_format", m.PayoutDateFormat, time.DateOnly)
	if m.PayoutDateFormat != "" && p.names[mPayoutDate] == "" {
		bad.addf("payout_date_format is set but columns.payout_date is not")
	}
	if m.TimeZone != "" {
		// "Local" would make the result depend on the host the job runs on.
		z, err := time.LoadLocation(m.TimeZone)
		if err != nil || m.TimeZone == "Local" {
			bad.addf("time_zone %s: not an IANA time zone name such as Europe/Berlin", reconcile.Quote(m.TimeZone))
		} else {
			p.loc = z
		}
	}
}

// compileText reads encoding, delimiter and skip_lines.
func (p *mappedPlan) compileText(m *Mapping, bad *problems) {
	enc, ok := mappedEncodings[strings.ToLower(m.Encoding)]
	switch {
	case m.Encoding == "":
		p.encName = "UTF-8"
	case !ok:
		bad.addf(`encoding %s: want "utf-8", "gbk", "gb18030", "latin1" or "windows-1252"`, reconcile.Quote(m.Encoding))
	default:
		p.enc = enc
		p.encName = strings.ToUpper(m.Encoding)
	}

	switch d := m.Delimiter; d {
	case "":
		p.delim = ','
	case "tab":
		p.delim = '\t'
	default:
		r, n := utf8.DecodeRuneInString(d)
		if n != len(d) || r == utf8.RuneError || r == '"' || r == '\r' || r == '\n' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			bad.addf(`delimiter %s: want one character that is not a letter, digit, quote or line break, such as ";" or "\t"`, reconcile.Quote(d))
		}
		p.delim = r
	}
	if m.SkipLines < 0 {
		bad.addf("skip_lines %d: want 0 or more", m.SkipLines)
	}
}

// timeFormat reads the time format setting, f: one of the names, or a
// layout; def when f is empty.
func (ps *problems) timeFormat(setting, f, def string) string {
	switch strings.ToLower(f) {
	case "":
		return def
	case timeRFC3339, timeUnix, timeUnixMs:
		return strings.ToLower(f)
	}
	if err := checkLayout(f); err != nil {
		ps.addf("%s %s: %v", setting, reconcile.Quote(f), err)
	}
	return f
}

// checkLayout refuses a layout that cannot say which day a row is on: the
// usual mistake is writing "YYYY-MM-DD", which Go reads as literal text.
func checkLayout(layout string) error {
	if strings.Contains(layout, "MST") {
		// Go gives an abbreviation it does not know a zero offset.
		return errors.New("zone abbreviations are ambiguous: use an offset (-0700) or time_zone")
	}
	ref := time.Date(2026, 11, 28, 21, 12, 45, 0, time.UTC)
	got, err := time.Parse(layout, ref.Format(layout))
	if err != nil || got.Year() != ref.Year() || got.Month() != ref.Month() || got.Day() != ref.Day() {
		return errors.New(`want "rfc3339", "unix", "unix_ms" or a Go layout with year, month and day, written with the reference time, such as "2006-01-02 15:04:05"`)
	}
	return nil
}

func (mappedParser) Parse(ctx context.Context, r io.Reader, opts Options, emit func(reconcile.Transaction) error) error {
	rows, err := newRowSink(ctx, opts, emit)
	if err != nil {
		return err
	}
	plan, err := opts.Mapping.compile(opts.location())
	if err != nil {
		return opts.wrap(0, "", err)
	}
	in, err := plan.decode(r, opts)
	if err != nil {
		return err
	}
	// Lines are held to the rules of lines.go after decoding, skipped
	// ones too: a file with CRs alone for line ends would otherwise be
	// skipped whole.
	lines := bufio.NewReader(newLineGuard(in, opts, 1, plan.skip+1))
	if err := plan.skipLines(lines, opts); err != nil {
		return err
	}

	cr := csv.NewReader(lines)
	cr.Comma = plan.delim
	cr.ReuseRecord = true
	// Zero: the header's field count becomes every row's.
	cr.FieldsPerRecord = 0
	f := &mappedFile{columns: columns{opts: opts}, plan: plan, cr: cr}
	if err := f.readHeader(); err != nil {
		return err
	}
	rows.reversalColumn = f.name(mAmount)
	f.payouts = payoutBook{field: f.name(mPayout), dateField: f.name(mPayoutDate), amountField: f.name(mAmount), feeField: f.name(mFee)}
	return f.details(&rows)
}

// decode readies the file as text in the mapping's encoding, read as
// openText reads a UTF-8 one.
func (p *mappedPlan) decode(r io.Reader, opts Options) (*bufio.Reader, error) {
	raw := bufio.NewReaderSize(r, 64<<10)
	in := raw
	if p.enc != nil {
		// A UTF-8 file under a legacy encoding would decode to plausible
		// garbage; its byte order mark is the one clear sign of it.
		if b, _ := raw.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
			return nil, opts.errorf(1, "", "file starts with a UTF-8 byte order mark but the mapping says encoding %s", reconcile.Quote(p.encName))
		}
		in = bufio.NewReaderSize(transform.NewReader(raw, p.enc.NewDecoder()), 64<<10)
	}
	// After decoding, so GB18030's own mark goes too.
	if err := startText(in, opts); err != nil {
		return nil, err
	}
	return in, nil
}

// skipLines discards the skip_lines lines before the header.
func (p *mappedPlan) skipLines(lines *bufio.Reader, opts Options) error {
	for i := range p.skip {
		if err := skipLine(lines); err == io.EOF {
			return opts.errorf(0, "", "empty file: it ends after line %d, within the %d lines skip_lines skips before the header", i, p.skip)
		} else if err != nil {
			return csvReadError(opts, i+1, err)
		}
	}
	return nil
}

// skipLine discards one line without holding it, so a preamble without
// line breaks cannot make the parser buffer the file. It returns io.EOF
// only when no line was left.
func skipLine(br *bufio.Reader) error {
	read := false
	for {
		b, err := br.ReadSlice('\n')
		read = read || len(b) > 0
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && read:
			return nil
		default:
			return err
		}
	}
}

// mappedFile is the state of one mapped file being read: its columns
// are the mapped ones, found by the names the mapping gives them.
type mappedFile struct {
	columns
	plan    *mappedPlan
	cr      *csv.Reader
	payouts payoutBook
}

// line is the physical line of the record just read: the reader counts
// from the first line after the skipped ones.
func (f *mappedFile) line() int {
	l, _ := f.cr.FieldPos(0)
	return l + f.plan.skip
}

func (f *mappedFile) readError(rec []string, err error) error {
	err = shiftLines(err, f.plan.skip)
	var pe *csv.ParseError
	if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
		return f.opts.errorf(pe.StartLine, "", "row has %d fields, header has %d", len(rec), len(f.names))
	}
	return csvReadError(f.opts, 0, err)
}

// damaged says why a field's text cannot be trusted, or "" when it can.
// The x/text decoders turn bytes that are not in their character set into
// U+FFFD without an error, so the replacement character is the only trace.
func (f *mappedFile) damaged(s string) string {
	if why := reconcile.TextFault(s); why != "" {
		return why
	}
	switch {
	case !strings.ContainsRune(s, utf8.RuneError):
		return ""
	case f.plan.enc == nil:
		return "replacement character U+FFFD: the text was damaged before it reached us"
	default:
		return "bytes that are not valid " + f.plan.encName + " (decoded as U+FFFD)"
	}
}

// readHeader reads the header row and finds the mapped columns in it.
func (f *mappedFile) readHeader() error {
	rec, err := f.cr.Read()
	if err == io.EOF {
		if f.plan.skip > 0 {
			return f.opts.errorf(0, "", "empty file: no header row after the %d skipped lines", f.plan.skip)
		}
		return f.opts.errorf(0, "", "empty file: no header row")
	}
	if err != nil {
		return f.readError(nil, err)
	}
	line := f.line()
	// ReuseRecord: the header's strings must be copied out before the
	// next Read overwrites the slice.
	header := make([]string, len(rec))
	f.columns = newColumns(f.opts, header, f.plan.names[:])
	for i, h := range rec {
		if why := f.damaged(h); why != "" {
			return f.opts.errorf(line, "", "header field %d: %s", i+1, why)
		}
		header[i] = trimAlso(h, f.plan.trim)
		if c := f.place(i, f.sameFold); c >= 0 {
			return f.opts.errorf(line, header[i], "duplicate column (fields %d and %d), mapped as columns.%s", f.at[c]+1, i+1, mappedNames[c])
		}
	}
	for c, name := range f.plan.names {
		if name != "" && !f.has(c) {
			return f.opts.errorf(line, name, "missing column, mapped as columns.%s (%s)", mappedNames[c], describeHeader(header, f.plan.delim))
		}
	}
	return nil
}

// details reads the rows after the header into rows.
func (f *mappedFile) details(rows *rowSink) error {
	for {
		rec, err := f.cr.Read()
		if err == io.EOF {
			return f.payouts.close(f.opts)
		}
		if err != nil {
			return f.readError(rec, err)
		}
		line := f.line()
		if err := f.checkText(rec, line); err != nil {
			return err
		}
		// After checkText: a trim character may be one it looks for.
		trimFields(rec, f.plan.trim)
		if err := rows.put(f.row(rec, line)); err != nil {
			return err
		}
	}
}

func (f *mappedFile) checkText(rec []string, line int) error {
	for i, s := range rec {
		if why := f.damaged(s); why != "" {
			return f.opts.errorf(line, f.names[i], "%s", why)
		}
	}
	return nil
}

func (f *mappedFile) row(rec []string, line int) (t reconcile.Transaction, err error) {
	p := f.plan
	t = reconcile.Transaction{
		RawKind:      f.field(rec, mKind),
		OrderNo:      f.field(rec, mOrderNo),
		RefundNo:     f.field(rec, mRefundNo),
		ChannelTxnID: f.field(rec, mChannelTxnID),
		Currency:     p.currency,
		Line:         line,
	}
	if err := f.kind(&t, line); err != nil {
		return t, err
	}
	// A payout's own row is a batch row: counted, never matched.
	own := t.Kind == reconcile.KindPayout
	if own {
		t.Kind = reconcile.KindBatch
	}
	if isEvent(t.Kind) {
		setEvent(&t, f.field(rec, mDisputeID), f.field(rec, mPaymentID), f.field(rec, mReason))
	}
	if p.currency == "" {
		t.Currency = f.field(rec, mCurrency)
	}
	digits, ok := reconcile.CurrencyDigits(t.Currency)
	if !ok {
		return t, f.errorf(line, mCurrency, "unknown currency %s", reconcile.Quote(t.Currency))
	}
	amount, err := f.amount(rec, t.Kind, digits, line)
	if err != nil {
		return t, err
	}
	// number refuses math.MinInt64, as absAmount needs.
	t.Amount = absAmount(amount)
	at := f.field(rec, mOccurredAt)
	if t.OccurredAt, err = p.time(at); err != nil {
		return t, f.errorf(line, mOccurredAt, "%s: %v", reconcile.Quote(at), err)
	}
	if t.FeeMilli, err = f.fee(rec, digits, line); err != nil {
		return t, err
	}
	if t.Status, err = f.status(rec, line); err != nil {
		return t, err
	}
	if f.has(mPayout) {
		err = f.payout(rec, &t, own, amount)
	}
	return t, err
}

// payout reads what the row says of payouts: a payout's own row (own)
// states it pays out amount, signed as written; any other row naming a
// payout is paid out in it.
func (f *mappedFile) payout(rec []string, t *reconcile.Transaction, own bool, amount int64) error {
	var on time.Time
	if s := f.field(rec, mPayoutDate); s != "" {
		d, err := f.plan.payoutDate(s)
		if err != nil {
			return f.errorf(t.Line, mPayoutDate, "%s: %v", reconcile.Quote(s), err)
		}
		on = d
	}
	return f.payouts.take(f.opts, t, f.field(rec, mPayout), own, amount, on)
}

// kind sets the kind of t from the mapping's kinds and checks the
// numbers the kind needs.
func (f *mappedFile) kind(t *reconcile.Transaction, line int) error {
	kind, ok := f.plan.kinds[matchKey(t.RawKind)]
	switch {
	case ok:
		t.Kind = kind
	case t.RawKind == "":
		return f.errorf(line, mKind, "empty kind")
	default:
		// Kept, not refused: the matcher puts rows it cannot classify in
		// front of a person.
		t.Kind = reconcile.KindOther
	}
	if t.Kind == reconcile.KindPayment && t.OrderNo == "" {
		return f.errorf(line, mOrderNo, "empty order number on a payment row")
	}
	// A channel may repeat a reference in its refund column on payments
	// and a dispute's events; neither has a refund number.
	if t.Kind == reconcile.KindPayment || t.Kind.Disputed() {
		t.RefundNo = ""
	}
	if t.ChannelTxnID == "" && (t.Kind == reconcile.KindPayment || t.Kind == reconcile.KindRefund) {
		return f.errorf(line, mChannelTxnID, "empty channel transaction id on a %s row", t.Kind)
	}
	return nil
}

// amount reads the amount of a row of kind, holding that of a row of
// a customer's money (not batch, not other) to the mapping's sign, and
// returns it as written, sign included.
func (f *mappedFile) amount(rec []string, kind reconcile.Kind, digits, line int) (int64, error) {
	p := f.plan
	s := f.field(rec, mAmount)
	v, err := p.number(s, digits, 0)
	if err != nil {
		return 0, f.errorf(line, mAmount, "%w", err)
	}
	if kind != reconcile.KindBatch && kind != reconcile.KindOther {
		// Money to the customer is negative when signed: a refund, a
		// chargeback of either round.
		out := kind.Returned()
		switch {
		case p.sign == signUnsigned && (s[0] == '-' || s[0] == '+'):
			return 0, f.errorf(line, mAmount, `%s: amount must be unsigned (the mapping's sign is "unsigned")`, reconcile.Quote(s))
		case p.sign == signSigned && !out && v < 0:
			return 0, f.errorf(line, mAmount, `%s: negative amount on a %s row (sign "signed": %s)`, reconcile.Quote(s), kind, signedRule)
		case p.sign == signSigned && out && v > 0:
			return 0, f.errorf(line, mAmount, `%s: positive amount on a %s row (sign "signed": %s)`, reconcile.Quote(s), kind, signedRule)
		}
	}
	return v, nil
}

// signedRule says what the sign "signed" holds amounts to.
const signedRule = "payments and reversals positive, refunds and chargebacks negative"

// fee reads the fee in thousandths of a minor unit, as every parser
// gives them; an empty cell is no fee.
func (f *mappedFile) fee(rec []string, digits, line int) (int64, error) {
	s := f.field(rec, mFee)
	if s == "" {
		return 0, nil
	}
	v, err := f.plan.number(s, digits, 3)
	if err != nil {
		return 0, f.errorf(line, mFee, "%w", err)
	}
	if f.plan.feeNeg {
		v = -v
	}
	return v, nil
}

// status reads the status column through the mapping's statuses; a file
// without one holds successes only.
func (f *mappedFile) status(rec []string, line int) (reconcile.TxnStatus, error) {
	if f.plan.names[mStatus] == "" {
		return reconcile.StatusSuccess, nil
	}
	s := f.field(rec, mStatus)
	st, ok := f.plan.statuses[matchKey(s)]
	if !ok {
		return "", f.errorf(line, mStatus, "unknown status %s (the mapping's statuses list %s)", reconcile.Quote(s), f.plan.statusSet)
	}
	return st, nil
}

// number reads an amount or a fee as written, sign included (amount
// holds it to the mapping's sign), scaled to 10^extra of the currency's
// minor unit: in major units as every format, or in whole minor units.
func (p *mappedPlan) number(s string, digits, extra int) (int64, error) {
	if !p.minor {
		return parseMoney(s, digits+extra, true)
	}
	if s == "" {
		return 0, errEmptyAmount
	}
	body := s
	if body[0] == '-' || body[0] == '+' {
		body = body[1:]
	}
	if body == "" || strings.TrimLeft(body, "0123456789") != "" {
		if strings.Contains(body, ".") {
			return 0, fmt.Errorf(`%s: want whole minor units (the mapping's amount_units is "minor")`, reconcile.Quote(s))
		}
		return 0, fmt.Errorf("%s: %w", reconcile.Quote(s), reconcile.ErrBadAmount)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	scale := int64(math.Pow10(extra))
	if err != nil || v == math.MinInt64 || v > math.MaxInt64/scale || v < -math.MaxInt64/scale {
		return 0, fmt.Errorf("%s: %w", reconcile.Quote(s), reconcile.ErrAmountRange)
	}
	return v * scale, nil
}

// maxUnix is the last second of year 9999: later instants cannot be
// written as RFC 3339, and are no settlement time anyway.
const maxUnix = 253402300799

// time reads a cell per the mapping's time_format.
func (p *mappedPlan) time(s string) (time.Time, error) {
	return p.timeAs("time_format", p.timeFmt, s)
}

// payoutDate reads a cell per the mapping's payout_date_format: the date
// of the time it writes, in the mapping's zone, as a date is held (UTC
// midnight).
func (p *mappedPlan) payoutDate(s string) (time.Time, error) {
	t, err := p.timeAs("payout_date_format", p.dateFmt, s)
	if err != nil {
		return t, err
	}
	y, m, d := t.In(p.loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
}

// timeAs reads a cell per format, the setting's. Every format is held to
// the range of the unix ones, so "01.01.0000" cannot pass for a date.
func (p *mappedPlan) timeAs(setting, format, s string) (time.Time, error) {
	t, err := p.parseTime(setting, format, s)
	if err != nil {
		return t, err
	}
	if t.Before(time.Unix(0, 0)) || t.After(time.Unix(maxUnix, 0)) {
		return time.Time{}, errors.New("outside the years 1970 to 9999")
	}
	return t, nil
}

func (p *mappedPlan) parseTime(setting, format, s string) (time.Time, error) {
	switch format {
	case timeRFC3339:
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t, nil
		}
		if t, err := time.ParseInLocation("2006-01-02T15:04:05", s, p.loc); err == nil {
			return t, nil
		}
		return time.Time{}, fmt.Errorf("want RFC 3339, such as 2026-11-28T09:12:45+01:00 (the mapping's %s)", setting)
	case timeUnix, timeUnixMs:
		limit := int64(maxUnix)
		if format == timeUnixMs {
			limit = maxUnix*1000 + 999
		}
		if s == "" || strings.TrimLeft(s, "0123456789") != "" {
			return time.Time{}, fmt.Errorf("want whole %s since 1970 (the mapping's %s is %s)", unixUnit(format), setting, reconcile.Quote(format))
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v > limit {
			return time.Time{}, fmt.Errorf("out of range for %s", format)
		}
		if format == timeUnixMs {
			return time.UnixMilli(v).In(p.loc), nil
		}
		return time.Unix(v, 0).In(p.loc), nil
	default:
		t, err := time.ParseInLocation(format, s, p.loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("want the mapping's %s %s", setting, reconcile.Quote(format))
		}
		return t, nil
	}
}

func unixUnit(format string) string {
	if format == timeUnixMs {
		return "milliseconds"
	}
	return "seconds"
}
