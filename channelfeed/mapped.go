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
	// Kinds lists, under "payment", "refund" and "batch", the values of
	// the kind column that mean each. Values match after trimming,
	// ignoring case. A value not listed makes a row of kind other, kept
	// for review; an empty cell is an error unless "" is listed. Batch
	// rows (fees, payouts) are counted, never matched.
	Kinds map[string][]string `json:"kinds"`
	// Statuses lists, under "success", "processing" and "failed", the
	// values of the status column that mean each, matched like Kinds. With
	// a status column every value must be listed ("" for an empty cell);
	// without one every row is a success.
	Statuses map[string][]string `json:"statuses,omitempty"`
	// AmountUnits is "major" (default: decimals such as "12.50") or
	// "minor" (whole minor units such as "1250"). Fees use the same units.
	AmountUnits string `json:"amount_units,omitempty"`
	// Sign says how payment and refund amounts carry their direction:
	// "unsigned" (default: no sign allowed), "signed" (payments ≥ 0,
	// refunds ≤ 0; the sign is checked against the kind, then dropped) or
	// "any" (the sign is dropped unchecked). Batch rows and rows of kind
	// other are read as absolute values whatever this says.
	Sign string `json:"sign,omitempty"`
	// FeeSign says how the channel writes a fee it charged: "positive"
	// (default) or "negative" (deducted, like Alipay's 服务费). A fee of
	// the other sign is a fee returned.
	FeeSign string `json:"fee_sign,omitempty"`
	// TimeFormat is "rfc3339" (default; an offset is optional), "unix"
	// (whole seconds), "unix_ms" (whole milliseconds) or a Go layout
	// written with the reference time, such as "02.01.2006 15:04".
	TimeFormat string `json:"time_format,omitempty"`
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
	Kind         string `json:"kind"`                // required: the row's kind, see Mapping.Kinds
	OrderNo      string `json:"order_no"`            // required: our order number; may be empty on refunds
	RefundNo     string `json:"refund_no,omitempty"` // our refund number; required when kinds lists refunds
	ChannelTxnID string `json:"channel_txn_id"`      // required: the channel's id of the row; may be empty on batch and other rows
	Amount       string `json:"amount"`              // required
	Currency     string `json:"currency,omitempty"`  // required unless Mapping.Currency is set
	OccurredAt   string `json:"occurred_at"`         // required
	Fee          string `json:"fee,omitempty"`       // optional; an empty cell is no fee
	Status       string `json:"status,omitempty"`    // optional, see Mapping.Statuses
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
	mFields
)

// mappedNames are the JSON keys of MappedColumns, used in messages so a
// user can find the setting to change.
var mappedNames = [mFields]string{"kind", "order_no", "refund_no", "channel_txn_id", "amount", "currency", "occurred_at", "fee", "status"}

func (c MappedColumns) names() [mFields]string {
	return [mFields]string{c.Kind, c.OrderNo, c.RefundNo, c.ChannelTxnID, c.Amount, c.Currency, c.OccurredAt, c.Fee, c.Status}
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

// compile checks the mapping and builds its plan; loc is the zone of
// naive times when the mapping names none.
func (m *Mapping) compile(loc *time.Location) (*mappedPlan, error) {
	if m == nil {
		return nil, errors.New(`format "mapped" needs a "mapping" object in the channel's config`)
	}
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	p := &mappedPlan{loc: loc, currency: strings.TrimSpace(m.Currency), trim: m.Trim, skip: m.SkipLines}

	for i, name := range m.Columns.names() {
		p.names[i] = strings.TrimSpace(name)
		if name != "" && p.names[i] == "" {
			bad("columns.%s is blank", mappedNames[i])
		}
	}
	for _, f := range []int{mKind, mOrderNo, mChannelTxnID, mAmount, mOccurredAt} {
		if p.names[f] == "" {
			bad("columns.%s is required", mappedNames[f])
		}
	}
	switch {
	case p.names[mCurrency] == "" && p.currency == "":
		bad("set columns.currency, or currency for a file in one currency")
	case p.names[mCurrency] != "" && p.currency != "":
		bad("set columns.currency or currency, not both")
	case p.currency != "":
		if _, ok := reconcile.CurrencyDigits(p.currency); !ok {
			bad("currency %s is not a known ISO 4217 code", reconcile.Quote(p.currency))
		}
	}

	p.kinds = map[string]reconcile.Kind{}
	listed := map[reconcile.Kind]int{}
	for _, name := range slices.Sorted(maps.Keys(m.Kinds)) {
		var kind reconcile.Kind
		switch name {
		case "payment":
			kind = reconcile.KindPayment
		case "refund":
			kind = reconcile.KindRefund
		case "batch":
			kind = reconcile.KindBatch
		default:
			bad("kinds: unknown kind %s (want payment, refund or batch; unlisted values are kept as other)", reconcile.Quote(name))
			continue
		}
		for _, v := range m.Kinds[name] {
			k := matchKey(v)
			if prev, ok := p.kinds[k]; ok {
				bad("kinds: %s is listed under both %s and %s", reconcile.Quote(v), prev, kind)
				continue
			}
			p.kinds[k] = kind
			listed[kind]++
		}
	}
	if listed[reconcile.KindPayment] == 0 && listed[reconcile.KindRefund] == 0 {
		bad("kinds: list the values of columns.kind that mean payment and refund")
	}
	if listed[reconcile.KindRefund] > 0 && p.names[mRefundNo] == "" {
		bad("columns.refund_no is required when kinds lists refunds")
	}

	switch {
	case p.names[mStatus] != "" && len(m.Statuses) == 0:
		bad("columns.status is set but statuses is empty: list the values meaning success, processing and failed")
	case p.names[mStatus] == "" && len(m.Statuses) > 0:
		bad("statuses is set but columns.status is not")
	}
	p.statuses = map[string]reconcile.TxnStatus{}
	var words []string
	for _, name := range slices.Sorted(maps.Keys(m.Statuses)) {
		var st reconcile.TxnStatus
		switch name {
		case "success":
			st = reconcile.StatusSuccess
		case "processing":
			st = reconcile.StatusProcessing
		case "failed":
			st = reconcile.StatusFailed
		default:
			bad("statuses: unknown status %s (want success, processing or failed)", reconcile.Quote(name))
			continue
		}
		for _, v := range m.Statuses[name] {
			k := matchKey(v)
			if prev, ok := p.statuses[k]; ok {
				bad("statuses: %s is listed under both %s and %s", reconcile.Quote(v), prev, st)
				continue
			}
			p.statuses[k] = st
			words = append(words, reconcile.Quote(strings.TrimSpace(v)))
		}
	}
	p.statusSet = strings.Join(words, ", ")

	switch m.AmountUnits {
	case "", "major":
	case "minor":
		p.minor = true
	default:
		bad(`amount_units %s: want "major" or "minor"`, reconcile.Quote(m.AmountUnits))
	}
	switch m.Sign {
	case "", signUnsigned:
		p.sign = signUnsigned
	case signSigned, signAny:
		p.sign = m.Sign
	default:
		bad(`sign %s: want "unsigned", "signed" or "any"`, reconcile.Quote(m.Sign))
	}
	switch m.FeeSign {
	case "", "positive":
	case "negative":
		p.feeNeg = true
	default:
		bad(`fee_sign %s: want "positive" or "negative"`, reconcile.Quote(m.FeeSign))
	}

	switch f := m.TimeFormat; strings.ToLower(f) {
	case "", timeRFC3339:
		p.timeFmt = timeRFC3339
	case timeUnix, timeUnixMs:
		p.timeFmt = strings.ToLower(f)
	default:
		if err := checkLayout(f); err != nil {
			bad("time_format %s: %v", reconcile.Quote(f), err)
		}
		p.timeFmt = f
	}
	if m.TimeZone != "" {
		// "Local" would make the result depend on the host the job runs on.
		z, err := time.LoadLocation(m.TimeZone)
		if err != nil || m.TimeZone == "Local" {
			bad("time_zone %s: not an IANA time zone name such as Europe/Berlin", reconcile.Quote(m.TimeZone))
		} else {
			p.loc = z
		}
	}

	enc, ok := mappedEncodings[strings.ToLower(m.Encoding)]
	switch {
	case m.Encoding == "":
		p.encName = "UTF-8"
	case !ok:
		bad(`encoding %s: want "utf-8", "gbk", "gb18030", "latin1" or "windows-1252"`, reconcile.Quote(m.Encoding))
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
			bad(`delimiter %s: want one character that is not a letter, digit, quote or line break, such as ";" or "\t"`, reconcile.Quote(d))
		}
		p.delim = r
	}
	if m.SkipLines < 0 {
		bad("skip_lines %d: want 0 or more", m.SkipLines)
	}

	if len(problems) > 0 {
		return nil, fmt.Errorf("mapping: %s", strings.Join(problems, "; "))
	}
	return p, nil
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
	if emit == nil {
		emit = discard
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	plan, err := opts.Mapping.compile(opts.location())
	if err != nil {
		return opts.wrap(0, "", err)
	}

	raw := bufio.NewReaderSize(r, 64<<10)
	in := raw
	if plan.enc != nil {
		// A UTF-8 file under a legacy encoding would decode to plausible
		// garbage; its byte order mark is the one clear sign of it.
		if b, _ := raw.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
			return opts.errorf(1, "", "file starts with a UTF-8 byte order mark but the mapping says encoding %s", reconcile.Quote(plan.encName))
		}
		in = bufio.NewReaderSize(transform.NewReader(raw, plan.enc.NewDecoder()), 64<<10)
	}
	// After decoding, so GB18030's own mark goes too.
	empty, err := skipBOM(in)
	if err != nil {
		return opts.wrap(0, "", fmt.Errorf("read: %w", err))
	}
	if empty {
		return opts.errorf(0, "", "empty file")
	}
	// Lines are held to the rules of lines.go after decoding, skipped
	// ones too: a file with CRs alone for line ends would otherwise be
	// skipped whole.
	lines := bufio.NewReader(newLineGuard(in, opts, 1, plan.skip+1))
	for i := range plan.skip {
		if err := skipLine(lines); err == io.EOF {
			return opts.errorf(0, "", "empty file: it ends after line %d, within the %d lines skip_lines skips before the header", i, plan.skip)
		} else if err != nil {
			return csvReadError(opts, i+1, err)
		}
	}

	cr := csv.NewReader(lines)
	cr.Comma = plan.delim
	cr.ReuseRecord = true
	// Zero: the header's field count becomes every row's.
	cr.FieldsPerRecord = 0
	f := &mappedFile{opts: opts, plan: plan, cr: cr}
	rec, err := cr.Read()
	if err == io.EOF {
		if plan.skip > 0 {
			return opts.errorf(0, "", "empty file: no header row after the %d skipped lines", plan.skip)
		}
		return opts.errorf(0, "", "empty file: no header row")
	}
	if err != nil {
		return f.readError(nil, err)
	}
	if err := f.readHeader(rec); err != nil {
		return err
	}

	for n := 1; ; n++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return f.readError(rec, err)
		}
		line := f.line()
		if err := f.checkText(rec, line); err != nil {
			return err
		}
		t, err := f.row(rec, line)
		if err != nil {
			return err
		}
		if err := emit(t); err != nil {
			return err
		}
		if n%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
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

// mappedFile is the state of one mapped file being read.
type mappedFile struct {
	opts   Options
	plan   *mappedPlan
	cr     *csv.Reader
	header []string     // header names as written, trimmed
	idx    [mFields]int // field index of each mapped column, -1 when unmapped
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
		return f.opts.errorf(pe.StartLine, "", "row has %d fields, header has %d", len(rec), len(f.header))
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

func (f *mappedFile) trim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(f.plan.trim, r)
	})
}

func (f *mappedFile) readHeader(rec []string) error {
	line := f.line()
	// ReuseRecord: the header's strings must be copied out before the
	// next Read overwrites the slice.
	f.header = make([]string, len(rec))
	for i := range f.idx {
		f.idx[i] = -1
	}
	for i, h := range rec {
		if why := f.damaged(h); why != "" {
			return f.opts.errorf(line, "", "header field %d: %s", i+1, why)
		}
		h = f.trim(h)
		f.header[i] = h
		for c, name := range f.plan.names {
			if name == "" || !strings.EqualFold(h, name) {
				continue
			}
			if f.idx[c] >= 0 {
				return f.opts.errorf(line, h, "duplicate column (fields %d and %d), mapped as columns.%s", f.idx[c]+1, i+1, mappedNames[c])
			}
			f.idx[c] = i
		}
	}
	for c, name := range f.plan.names {
		if name != "" && f.idx[c] < 0 {
			return f.opts.errorf(line, name, "missing column, mapped as columns.%s (%s)", mappedNames[c], describeHeader(f.header, f.plan.delim))
		}
	}
	return nil
}

func (f *mappedFile) checkText(rec []string, line int) error {
	for i, s := range rec {
		if why := f.damaged(s); why != "" {
			return f.opts.errorf(line, f.header[i], "%s", why)
		}
	}
	return nil
}

func (f *mappedFile) field(rec []string, c int) string {
	if f.idx[c] < 0 {
		return ""
	}
	return f.trim(rec[f.idx[c]])
}

func (f *mappedFile) errorf(line, c int, format string, args ...any) error {
	name := f.plan.names[c]
	if f.idx[c] >= 0 {
		name = f.header[f.idx[c]]
	}
	return f.opts.errorf(line, name, format, args...)
}

func (f *mappedFile) row(rec []string, line int) (reconcile.Transaction, error) {
	p := f.plan
	t := reconcile.Transaction{
		RawKind:      f.field(rec, mKind),
		OrderNo:      f.field(rec, mOrderNo),
		RefundNo:     f.field(rec, mRefundNo),
		ChannelTxnID: f.field(rec, mChannelTxnID),
		Currency:     p.currency,
		Line:         line,
	}
	kind, ok := p.kinds[matchKey(t.RawKind)]
	switch {
	case ok:
		t.Kind = kind
	case t.RawKind == "":
		return t, f.errorf(line, mKind, "empty kind")
	default:
		// Kept, not refused: the matcher puts rows it cannot classify in
		// front of a person.
		t.Kind = reconcile.KindOther
	}
	switch t.Kind {
	case reconcile.KindPayment:
		if t.OrderNo == "" {
			return t, f.errorf(line, mOrderNo, "empty order number on a payment row")
		}
		// A channel may repeat a reference in its refund column on
		// payments; a payment has no refund number.
		t.RefundNo = ""
	case reconcile.KindRefund:
		if t.RefundNo == "" {
			return t, f.errorf(line, mRefundNo, "empty refund number on a refund row")
		}
	}
	if t.ChannelTxnID == "" && (t.Kind == reconcile.KindPayment || t.Kind == reconcile.KindRefund) {
		return t, f.errorf(line, mChannelTxnID, "empty channel transaction id on a %s row", t.Kind)
	}

	if p.currency == "" {
		t.Currency = f.field(rec, mCurrency)
	}
	digits, ok := reconcile.CurrencyDigits(t.Currency)
	if !ok {
		return t, f.errorf(line, mCurrency, "unknown currency %s", reconcile.Quote(t.Currency))
	}

	s := f.field(rec, mAmount)
	v, err := p.number(s, digits, 0)
	if err != nil {
		return t, f.errorf(line, mAmount, "%w", err)
	}
	if t.Kind == reconcile.KindPayment || t.Kind == reconcile.KindRefund {
		switch {
		case p.sign == signUnsigned && (s[0] == '-' || s[0] == '+'):
			return t, f.errorf(line, mAmount, `%s: amount must be unsigned (the mapping's sign is "unsigned")`, reconcile.Quote(s))
		case p.sign == signSigned && t.Kind == reconcile.KindPayment && v < 0:
			return t, f.errorf(line, mAmount, `%s: negative amount on a payment row (sign "signed": payments positive, refunds negative)`, reconcile.Quote(s))
		case p.sign == signSigned && t.Kind == reconcile.KindRefund && v > 0:
			return t, f.errorf(line, mAmount, `%s: positive amount on a refund row (sign "signed": payments positive, refunds negative)`, reconcile.Quote(s))
		}
	}
	// number refuses math.MinInt64, so the negation cannot overflow.
	if v < 0 {
		v = -v
	}
	t.Amount = v

	at := f.field(rec, mOccurredAt)
	t.OccurredAt, err = p.time(at)
	if err != nil {
		return t, f.errorf(line, mOccurredAt, "%s: %v", reconcile.Quote(at), err)
	}

	if fee := f.field(rec, mFee); fee != "" {
		// Thousandths of a minor unit, as every parser gives them.
		t.FeeMilli, err = p.number(fee, digits, 3)
		if err != nil {
			return t, f.errorf(line, mFee, "%w", err)
		}
		if p.feeNeg {
			t.FeeMilli = -t.FeeMilli
		}
	}

	t.Status = reconcile.StatusSuccess
	if p.names[mStatus] != "" {
		s := f.field(rec, mStatus)
		st, ok := p.statuses[matchKey(s)]
		if !ok {
			return t, f.errorf(line, mStatus, "unknown status %s (the mapping's statuses list %s)", reconcile.Quote(s), p.statusSet)
		}
		t.Status = st
	}
	return t, nil
}

// number reads an amount or a fee as written, sign included, scaled to
// 10^extra of the currency's minor unit.
func (p *mappedPlan) number(s string, digits, extra int) (int64, error) {
	if s == "" {
		return 0, errors.New("empty amount")
	}
	if !p.minor {
		return reconcile.ParseDecimal(s, digits+extra)
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

// time reads a cell per the mapping's time_format. Every format is held
// to the range of the unix ones, so "01.01.0000" cannot pass for a date.
func (p *mappedPlan) time(s string) (time.Time, error) {
	t, err := p.parseTime(s)
	if err != nil {
		return t, err
	}
	if t.Before(time.Unix(0, 0)) || t.After(time.Unix(maxUnix, 0)) {
		return time.Time{}, errors.New("outside the years 1970 to 9999")
	}
	return t, nil
}

func (p *mappedPlan) parseTime(s string) (time.Time, error) {
	switch p.timeFmt {
	case timeRFC3339:
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t, nil
		}
		if t, err := time.ParseInLocation("2006-01-02T15:04:05", s, p.loc); err == nil {
			return t, nil
		}
		return time.Time{}, errors.New("want RFC 3339, such as 2026-11-28T09:12:45+01:00 (the mapping's time_format)")
	case timeUnix, timeUnixMs:
		limit := int64(maxUnix)
		if p.timeFmt == timeUnixMs {
			limit = maxUnix*1000 + 999
		}
		if s == "" || strings.TrimLeft(s, "0123456789") != "" {
			return time.Time{}, fmt.Errorf("want whole %s since 1970 (the mapping's time_format is %s)", unixUnit(p.timeFmt), reconcile.Quote(p.timeFmt))
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v > limit {
			return time.Time{}, fmt.Errorf("out of range for %s", p.timeFmt)
		}
		if p.timeFmt == timeUnixMs {
			return time.UnixMilli(v).In(p.loc), nil
		}
		return time.Unix(v, 0).In(p.loc), nil
	default:
		t, err := time.ParseInLocation(p.timeFmt, s, p.loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("want the mapping's time_format %s", reconcile.Quote(p.timeFmt))
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
