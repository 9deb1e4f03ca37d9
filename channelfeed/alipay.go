package channelfeed

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/simplifiedchinese"

	"reconcile"
)

// alipayParser reads the Alipay trade bill's detail file (业务明细, from
// bill_type=trade; ParseFile takes it out of the downloaded ZIP): GBK text,
// comment lines starting with '#', a start marker containing 业务明细列表,
// the header, the detail rows, an end marker containing 业务明细列表结束
// and two footer lines with the control totals of payments and refunds.
// Columns are found by name, with the units stripped from the header.
//
// The bill has no currency column: an Alipay acquiring account settles in
// CNY, so every row is CNY. It lists completed movements only, so every
// row is a success. It carries no chargebacks: 业务类型 is 交易 or 退款,
// and money a customer gets back is a refund row.
type alipayParser struct{}

var _ Parser = alipayParser{}

// Detail columns the parser reads, by slot, found by name (aliColumns).
const (
	aliTxnID = iota
	aliOrderNo
	aliType
	aliTime
	aliAmount
	aliReceived
	aliDiscount
	aliRefundNo
	aliFee
	aliSlots
)

// aliColumns names the columns of the slots, units stripped.
var aliColumns = [aliSlots]string{
	aliTxnID:    "支付宝交易号",
	aliOrderNo:  "商户订单号",
	aliType:     "业务类型",
	aliTime:     "完成时间",
	aliAmount:   "订单金额",
	aliReceived: "商家实收",
	aliDiscount: "商家优惠",
	aliRefundNo: "退款批次号/请求号",
	aliFee:      "服务费",
}

var aliRequired = []int{aliTxnID, aliOrderNo, aliType, aliTime, aliAmount, aliReceived, aliRefundNo}

// aliUnits are the unit suffixes of header names; 账务明细 writes signed
// units, other tools half-width parentheses.
var aliUnits = []string{"（元）", "(元)", "（+元）", "（-元）", "(+元)", "(-元)"}

const (
	aliStartMarker = "业务明细列表"
	aliEndMarker   = "业务明细列表结束"
	aliPayWord     = "交易"
	aliRefundWord  = "退款"
	aliPayTotal    = "交易合计"
	aliRefundTotal = "退款合计"
	aliCurrency    = "CNY"
	aliDigits      = 2 // of CNY
	aliTimeLayout  = "2006-01-02 15:04:05"
)

// The footer lines, e.g. #交易合计：7笔，商家实收共611.40元，商家优惠共5.00元.
// Colons and commas may be full- or half-width. Numbers are captured
// loosely so that a malformed one is reported by the amount parser,
// naming what is wrong; the 商家优惠 part is checked when present.
var (
	aliPayFooter    = regexp.MustCompile(`^#\s*交易合计\s*[:：]\s*(.*?)\s*笔\s*[,，]\s*商家实收共\s*(.*?)\s*元\s*(?:[,，]\s*商家优惠共\s*(.*?)\s*元)?\s*$`)
	aliRefundFooter = regexp.MustCompile(`^#\s*退款合计\s*[:：]\s*(.*?)\s*笔\s*[,，]\s*商家实收退款共\s*(.*?)\s*元\s*(?:[,，]\s*商家优惠退款共\s*(.*?)\s*元)?\s*$`)
)

// aliTotals are the running totals of one row kind, compared with its
// footer line.
type aliTotals struct {
	rows     int64
	received int64 // Σ商家实收 as signed in the file, fen
	discount int64 // Σ商家优惠 as signed in the file, fen
}

// aliFooter is one footer line as read.
type aliFooter struct {
	line                      int
	count, received, discount string
	hasDiscount               bool
}

// aliBill is the state of one bill being read.
type aliBill struct {
	columns // of aliColumns, the header's names as written
	loc     *time.Location
	lines   *lineScanner
	dec     *encoding.Decoder

	hint        string // why the current line may not be GBK, for errors
	sawUTF8     bool   // a line that looks like UTF-8: a re-saved bill?
	badText     error  // why next stopped at a line it read: not GBK text
	rows        int64  // detail rows read, of every kind
	pay, refund aliTotals
}

func (alipayParser) Parse(ctx context.Context, r io.Reader, opts Options, emit func(reconcile.Transaction) error) error {
	rows, err := newRowSink(ctx, opts, emit)
	if err != nil {
		return err
	}
	// Lines are split before they are decoded: GBK and GB18030 never use
	// '\n', '\r', '"' or ',' inside a multi-byte character, and decoding
	// a line at a time keeps its raw bytes at hand to explain a bad one.
	// A quoted field may hold a CR (see aliSplit).
	b := &aliBill{
		columns: columns{opts: opts},
		loc:     opts.location(),
		lines:   newLineScanner(r, opts, true),
		dec:     simplifiedchinese.GB18030.NewDecoder(),
	}
	if err := b.preamble(); err != nil {
		return err
	}
	if err := b.header(); err != nil {
		return err
	}
	if err := b.details(&rows); err != nil {
		return err
	}
	return b.trailer()
}

// next reads the next line and decodes it. It returns false at the end
// of the file, and at a fault, which failed then returns.
func (b *aliBill) next() (string, bool) {
	if !b.lines.scan() {
		return "", false
	}
	line, raw := b.lines.line, b.lines.bytes()
	b.hint = ""
	switch {
	case b.lines.bom():
		b.hint = "; the file starts with a UTF-8 byte order mark, but Alipay sends GBK: was the bill re-saved?"
	case utf8.Valid(raw) && !aliASCII(raw):
		b.hint = "; the line is valid UTF-8, but Alipay sends GBK: was the bill re-saved?"
	}
	b.sawUTF8 = b.sawUTF8 || b.hint != ""
	s, err := b.dec.Bytes(raw)
	if err != nil {
		b.badText = b.opts.errorf(line, "", "decode GBK: %v", err)
		return "", false
	}
	text := string(s)
	// x/text's decoder replaces invalid bytes with U+FFFD without an
	// error. Which field holds it is known only once the line is
	// split, so rows are checked later; other lines here. A NUL byte
	// decodes as itself: the header and rows check their fields for
	// it, comment lines here.
	comment := strings.HasPrefix(strings.TrimSpace(text), "#")
	if strings.ContainsRune(text, utf8.RuneError) && (len(b.names) == 0 || comment) {
		b.badText = b.opts.errorf(line, "", "%s", "invalid GBK bytes (decoded as U+FFFD)"+b.hint)
		return "", false
	}
	if why := reconcile.TextFault(text); why != "" && comment {
		b.badText = b.opts.errorf(line, "", "%s", why)
		return "", false
	}
	return text, true
}

// nextNonBlank is next past blank lines; t is the line trimmed.
func (b *aliBill) nextNonBlank() (s, t string, ok bool) {
	for {
		if s, ok = b.next(); !ok {
			return "", "", false
		}
		if t = strings.TrimSpace(s); t != "" {
			return s, t, true
		}
	}
}

// failed explains why next returned false when it was not the end of
// the file; nil at a clean end.
func (b *aliBill) failed() error {
	if b.badText != nil {
		return b.badText
	}
	return b.lines.err
}

// preamble reads the comment lines up to the start marker. A file
// without the markers is not this bill, whatever its header says.
func (b *aliBill) preamble() error {
	for seen := false; ; seen = true {
		_, t, ok := b.nextNonBlank()
		if !ok {
			if err := b.failed(); err != nil {
				return err
			}
			if !seen {
				return b.opts.errorf(0, "", "empty file")
			}
			return b.notThisBill(0, "no #…"+aliStartMarker+"… start marker")
		}
		if !strings.HasPrefix(t, "#") {
			return b.notThisBill(b.lines.line, "want the #…"+aliStartMarker+"… start marker before the detail header")
		}
		if strings.Contains(t, aliStartMarker) && !strings.Contains(t, aliEndMarker) {
			return nil
		}
	}
}

// notThisBill is the error for a file that is no Alipay detail bill, at
// line; a bill re-saved as UTF-8 reads as one, which it says.
func (b *aliBill) notThisBill(line int, why string) error {
	msg := why + ": not an Alipay 业务明细 bill"
	if b.sawUTF8 {
		msg += " (the file looks like UTF-8; Alipay sends GBK)"
	}
	return b.opts.errorf(line, "", "%s", msg)
}

// details reads the detail rows into rows, up to the first comment line,
// which must be the end marker.
func (b *aliBill) details(rows *rowSink) error {
	for {
		s, t, ok := b.nextNonBlank()
		if !ok {
			if err := b.failed(); err != nil {
				return err
			}
			return b.opts.wrap(b.lines.line+1, "", fmt.Errorf("%w: no #…%s… end marker, the file ends after the detail rows (truncated download?)", reconcile.ErrControlTotal, aliEndMarker))
		}
		if strings.HasPrefix(t, "#") {
			if !strings.Contains(t, aliEndMarker) {
				return b.opts.errorf(b.lines.line, "", "want the #…%s… end marker after the detail rows", aliEndMarker)
			}
			return nil
		}
		if err := rows.put(b.row(s, b.lines.line)); err != nil {
			return err
		}
	}
}

// trailer reads the footer lines and other comments after the end
// marker, in any order, and checks each footer against its rows.
func (b *aliBill) trailer() error {
	var payFooter, refundFooter *aliFooter
	for {
		_, t, ok := b.nextNonBlank()
		if !ok {
			if err := b.failed(); err != nil {
				return err
			}
			break
		}
		if !strings.HasPrefix(t, "#") {
			return b.opts.errorf(b.lines.line, "", "unexpected line after the end marker")
		}
		var err error
		switch {
		case strings.Contains(t, aliPayTotal):
			payFooter, err = b.footer(t, b.lines.line, aliPayTotal, aliPayFooter, payFooter)
		case strings.Contains(t, aliRefundTotal):
			refundFooter, err = b.footer(t, b.lines.line, aliRefundTotal, aliRefundFooter, refundFooter)
		}
		if err != nil {
			return err
		}
	}
	for _, f := range []struct {
		word   string
		footer *aliFooter
	}{{aliPayTotal, payFooter}, {aliRefundTotal, refundFooter}} {
		if f.footer == nil {
			return b.opts.wrap(b.lines.line+1, "", fmt.Errorf("%w: no #%s footer line after the end marker (truncated download?)", reconcile.ErrControlTotal, f.word))
		}
	}
	if err := b.check(payFooter, aliPayWord, &b.pay); err != nil {
		return err
	}
	return b.check(refundFooter, aliRefundWord, &b.refund)
}

func aliASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// aliSplit splits a decoded line. Alipay does not quote, so a line
// without a quote is split on commas; one with a quote goes through
// encoding/csv, leniently, in case free text (商品名称, 备注) was quoted.
// A quoted field cannot span lines: the detail section is line-oriented,
// a comment line ends it.
func aliSplit(s string) ([]string, error) {
	var fields []string
	if strings.IndexByte(s, '"') < 0 {
		fields = strings.Split(s, ",")
	} else {
		cr := csv.NewReader(strings.NewReader(s))
		cr.LazyQuotes = true
		cr.FieldsPerRecord = -1
		var err error
		fields, err = cr.Read()
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				err = fmt.Errorf("%w (byte %d of the line)", pe.Err, pe.Column)
			}
			return nil, err
		}
	}
	// Excel guards: identifiers carry a trailing tab.
	for i, f := range fields {
		fields[i] = strings.TrimSpace(f)
	}
	return fields, nil
}

// aliColumn is a header name without its unit: 订单金额（元） → 订单金额.
func aliColumn(name string) string {
	for _, u := range aliUnits {
		if n, ok := strings.CutSuffix(name, u); ok {
			return strings.TrimSpace(n)
		}
	}
	return name
}

// header reads the detail header, the line after the start marker.
func (b *aliBill) header() error {
	s, ok := b.next()
	if !ok {
		if err := b.failed(); err != nil {
			return err
		}
		return b.opts.wrap(b.lines.line+1, "", fmt.Errorf("%w: the file ends after the start marker (truncated download?)", reconcile.ErrControlTotal))
	}
	line := b.lines.line
	if strings.TrimSpace(s) == "" {
		return b.opts.errorf(line, "", "empty line; want the detail header after the start marker")
	}
	if strings.HasPrefix(strings.TrimSpace(s), "#") {
		return b.opts.errorf(line, "", "comment line; want the detail header after the start marker")
	}
	names, err := aliSplit(s)
	if err != nil {
		return b.opts.wrap(line, "", err)
	}
	if err := b.opts.checkHeader(line, names); err != nil {
		return err
	}
	// Any column named twice is refused, whether it is read or not.
	b.columns = newColumns(b.opts, names, aliColumns[:])
	cols := make(map[string]int, len(names))
	for i, name := range names {
		canon := aliColumn(name)
		if canon == "" {
			continue
		}
		if j, dup := cols[canon]; dup {
			return b.opts.errorf(line, name, "duplicate column (fields %d and %d)", j+1, i+1)
		}
		cols[canon] = i
	}
	for c, canon := range aliColumns {
		if i, ok := cols[canon]; ok {
			b.at[c] = int32(i)
		}
	}
	for _, c := range aliRequired {
		if !b.has(c) {
			return b.opts.errorf(line, aliColumns[c], "missing required column")
		}
	}
	return nil
}

// amount reads a plain decimal in yuan as fen, signed: the bill writes
// a refund's amounts negative. Empty is an error unless optional, when
// it is zero, as is a column the header lacks.
func (b *aliBill) amount(f []string, c, line int, optional bool) (int64, error) {
	if !b.has(c) || optional && b.field(f, c) == "" {
		return 0, nil
	}
	return b.money(f, line, c, aliDigits, true)
}

func (b *aliBill) row(s string, line int) (t reconcile.Transaction, err error) {
	f, err := b.fields(s, line)
	if err != nil {
		return t, err
	}
	b.rows++
	t = reconcile.Transaction{
		RawKind:      b.field(f, aliType),
		OrderNo:      b.field(f, aliOrderNo),
		ChannelTxnID: b.field(f, aliTxnID),
		Currency:     aliCurrency,
		Status:       reconcile.StatusSuccess,
		Line:         line,
	}
	if t.RawKind == "" {
		return t, b.errorf(line, aliType, "empty 业务类型")
	}
	at := b.field(f, aliTime)
	if t.OccurredAt, err = time.ParseInLocation(aliTimeLayout, at, b.loc); err != nil {
		return t, b.errorf(line, aliTime, "%s: want YYYY-MM-DD HH:MM:SS", reconcile.Quote(at))
	}

	// Every amount read is parsed on every row, whatever its kind: a
	// malformed number anywhere means the file is not what we think.
	amount, err := b.amount(f, aliAmount, line, false)
	if err != nil {
		return t, err
	}
	received, err := b.amount(f, aliReceived, line, false)
	if err != nil {
		return t, err
	}
	discount, err := b.amount(f, aliDiscount, line, true)
	if err != nil {
		return t, err
	}
	if t.FeeMilli, err = b.fee(f, line); err != nil {
		return t, err
	}

	totals, err := b.kind(&t, f, amount, line)
	if err != nil || totals == nil {
		return t, err
	}
	err = b.count(totals, &t, f, received, discount, line)
	return t, err
}

// fields splits a detail row and checks its fields as text.
func (b *aliBill) fields(s string, line int) ([]string, error) {
	f, err := aliSplit(s)
	if err != nil {
		return nil, b.opts.wrap(line, "", err)
	}
	for i, v := range f {
		if strings.ContainsRune(v, utf8.RuneError) {
			column := ""
			if i < len(b.names) {
				column = b.names[i]
			}
			return nil, b.opts.errorf(line, column, "%s", "invalid GBK bytes (decoded as U+FFFD)"+b.hint)
		}
	}
	if err := b.opts.checkRow(line, f, b.names); err != nil {
		return nil, err
	}
	if len(f) != len(b.names) {
		return nil, b.opts.errorf(line, "", "row has %d fields, header has %d", len(f), len(b.names))
	}
	return f, nil
}

// fee reads 服务费 as FeeMilli, positive when the channel takes a fee:
// Alipay shows a charged fee as negative and a returned one as positive.
func (b *aliBill) fee(f []string, line int) (int64, error) {
	if b.field(f, aliFee) == "" {
		return 0, nil
	}
	fee, err := b.money(f, line, aliFee, aliDigits+3, true)
	if err != nil {
		return 0, err
	}
	// money's range is symmetric, so the negation cannot overflow.
	return -fee, nil
}

// kind sets the kind and amount of t from its 业务类型 and amount, its
// 订单金额, and returns the totals of the footer that counts it: nil for
// a kind that neither footer counts.
func (b *aliBill) kind(t *reconcile.Transaction, f []string, amount int64, line int) (*aliTotals, error) {
	switch t.RawKind {
	case aliPayWord:
		// 退款批次号/请求号 is empty on payment rows and not read there.
		t.Kind = reconcile.KindPayment
		if amount < 0 {
			return nil, b.errorf(line, aliAmount, "negative amount %s on a 交易 row", b.field(f, aliAmount))
		}
		t.Amount = amount
		return &b.pay, nil
	case aliRefundWord:
		t.Kind = reconcile.KindRefund
		if amount > 0 {
			return nil, b.errorf(line, aliAmount, "positive amount %s on a 退款 row: the bill writes refunds negative", b.field(f, aliAmount))
		}
		t.Amount = -amount
		t.RefundNo = b.field(f, aliRefundNo)
		if t.RefundNo == "" {
			return nil, b.errorf(line, aliRefundNo, "empty refund number on a 退款 row")
		}
		// The bill has no refund id: a refund is known by its trade and its
		// request number, which Alipay honours once per trade. Two rows
		// with the same pair therefore share a channel id, and the matcher
		// sends a repeated channel id to review, never to an automatic
		// reversal: the same refund reported twice must not be reversed.
		t.ChannelTxnID = b.field(f, aliTxnID) + "/" + t.RefundNo
		return &b.refund, nil
	}
	// A 业务类型 this parser does not know is kept for review. Its
	// direction is unknown, so the amount is shown without its sign;
	// it is outside both footer totals, which count 交易 and 退款 rows.
	t.Kind = reconcile.KindOther
	t.Amount = absAmount(amount)
	return nil, nil
}

// count checks the ids of t, a 交易 or 退款 row of f, and adds it to
// totals, its footer's.
func (b *aliBill) count(totals *aliTotals, t *reconcile.Transaction, f []string, received, discount int64, line int) error {
	if t.OrderNo == "" {
		return b.errorf(line, aliOrderNo, "empty order number on a %s row", t.RawKind)
	}
	if b.field(f, aliTxnID) == "" {
		return b.errorf(line, aliTxnID, "empty 支付宝交易号 on a %s row", t.RawKind)
	}
	totals.rows++
	var ok bool
	if totals.received, ok = reconcile.AddChecked(totals.received, received); !ok {
		return b.errorf(line, aliReceived, "column total overflows")
	}
	if totals.discount, ok = reconcile.AddChecked(totals.discount, discount); !ok {
		return b.errorf(line, aliDiscount, "column total overflows")
	}
	return nil
}

// footer reads one footer line; seen is the one read before, if any.
func (b *aliBill) footer(t string, line int, word string, re *regexp.Regexp, seen *aliFooter) (*aliFooter, error) {
	if seen != nil {
		return nil, b.opts.errorf(line, "", "second #%s line (the first is line %d)", word, seen.line)
	}
	m := re.FindStringSubmatch(t)
	if m == nil {
		return nil, b.opts.errorf(line, "", "cannot read the #%s line %s", word, reconcile.Quote(t))
	}
	return &aliFooter{line: line, count: m[1], received: m[2], discount: m[3], hasDiscount: m[3] != ""}, nil
}

// check compares one footer line with the totals of its rows: the count
// first, since a missing row explains any sum that is off.
func (b *aliBill) check(f *aliFooter, word string, got *aliTotals) error {
	opts := b.opts
	n, err := reconcile.ParseDecimal(f.count, 0)
	if err != nil || n < 0 {
		return opts.errorf(f.line, b.name(aliType), "footer row count %s: want a whole number", reconcile.Quote(f.count))
	}
	if n != got.rows {
		return opts.wrap(f.line, b.name(aliType), fmt.Errorf("%w: footer says %d %s rows, file has %d",
			reconcile.ErrControlTotal, n, word, got.rows))
	}
	sums := []struct {
		column int
		text   string
		got    int64
		check  bool
	}{
		{aliReceived, f.received, got.received, true},
		{aliDiscount, f.discount, got.discount, f.hasDiscount},
	}
	for _, s := range sums {
		if !s.check {
			continue
		}
		want, err := reconcile.ParseAmount(s.text, aliCurrency)
		if err != nil {
			return opts.errorf(f.line, b.name(s.column), "footer: %w", err)
		}
		if want != s.got {
			return opts.wrap(f.line, b.name(s.column), fmt.Errorf("%w: footer says %s, %s rows sum to %s",
				reconcile.ErrControlTotal, reconcile.FormatAmount(want, aliCurrency), word, reconcile.FormatAmount(s.got, aliCurrency)))
		}
	}
	return nil
}
