package channelfeed

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"regexp"
	"strings"
	"time"

	"reconcile"
)

// wechatPayParser reads a WeChat Pay trade bill (交易账单, v2 downloadbill
// and v3 tradebill share the layout): a plain header, detail rows whose
// every field starts with a backtick, a summary header starting with
// 总交易单数 and one summary row. Columns are found by name because the
// header differs per bill type (ALL, SUCCESS, REFUND) and account vintage.
//
// The bill is not CSV: fields are never quoted and free text (商品名称,
// 商户数据包) may hold commas, so rows are split on the two characters ",`".
//
// The bill carries no chargebacks: 交易状态 is SUCCESS, REFUND or REVOKED,
// and money a customer gets back is a refund row.
type wechatPayParser struct{}

var _ Parser = wechatPayParser{}

// Detail columns the parser reads, by slot, found by name (wxColumns).
const (
	wxTime = iota
	wxTxnID
	wxOrderNo
	wxState
	wxCurrency
	wxSettle
	wxRefundID
	wxRefundNo
	wxRefundAmount
	wxRechargeRefund
	wxVoucherRefund
	wxHongbaoRefund
	wxRefundState
	wxFee
	wxRate
	wxOrderAmount
	wxRefundApplied
	wxSlots
)

// wxColumns names the columns of the slots as today's layout does.
var wxColumns = [wxSlots]string{
	wxTime:           "交易时间",
	wxTxnID:          "微信订单号",
	wxOrderNo:        "商户订单号",
	wxState:          "交易状态",
	wxCurrency:       "货币种类",
	wxSettle:         "应结订单金额",
	wxRefundID:       "微信退款单号",
	wxRefundNo:       "商户退款单号",
	wxRefundAmount:   "退款金额",
	wxRechargeRefund: "充值券退款金额",
	wxVoucherRefund:  "代金券或立减优惠退款金额",
	wxHongbaoRefund:  "企业红包退款金额",
	wxRefundState:    "退款状态",
	wxFee:            "手续费",
	wxRate:           "费率",
	wxOrderAmount:    "订单金额",
	wxRefundApplied:  "申请退款金额",
}

// wxCount is the first column of the summary header.
const wxCount = "总交易单数"

var wxRequired = []int{wxTime, wxTxnID, wxOrderNo, wxState, wxCurrency}

// wxAliases maps pre-2018 header names onto today's, so one mapping reads
// both layouts.
var wxAliases = map[string]string{
	"子商户号":       "特约商户号",
	"总金额":        wxColumns[wxSettle],
	"代金券或立减优惠金额": "代金券金额",
	"企业红包金额":     "代金券金额",
}

// wxSums are the detail columns the summary row totals; 手续费 has three
// more decimals than the currency.
var wxSums = [...]struct {
	column int
	fee    bool
}{
	{wxSettle, false},
	{wxRefundAmount, false},
	{wxRechargeRefund, false},
	{wxVoucherRefund, false},
	{wxHongbaoRefund, false},
	{wxOrderAmount, false},
	{wxRefundApplied, false},
	{wxFee, true},
}

// wxSummaryOf maps a summary column onto the detail column it totals.
// Summary columns not listed are not checked.
var wxSummaryOf = map[string]int{
	"应结订单总金额":       wxSettle,
	"总交易额":          wxSettle, // pre-2018: Σ总金额
	"退款总金额":         wxRefundAmount,
	"总退款金额":         wxRefundAmount,
	"充值券退款总金额":      wxRechargeRefund,
	"总代金券或立减优惠退款金额": wxVoucherRefund,
	"总企业红包退款金额":     wxHongbaoRefund,
	"手续费总金额":        wxFee,
	"订单总金额":         wxOrderAmount,
	"申请退款总金额":       wxRefundApplied,
}

const wxTimeLayout = "2006-01-02 15:04:05"

// wxBill is the state of one bill being read.
type wxBill struct {
	columns // of wxColumns, the header's names as written
	loc     *time.Location
	lines   *lineScanner

	// payAmount and refundAmount are the columns compared for each kind:
	// 订单金额 and 申请退款金额, or the pre-2018 应结订单金额 (总金额) and
	// 退款金额 when the layout lacks them; refundAmount is -1 in a bill
	// without refunds.
	payAmount, refundAmount int
	// The wxSums entries of the amount columns: looked up once in the
	// header rather than on every row.
	kPay, kRefund, kFee int
	fields              []string // reused by every row

	currency string
	digits   int
	rows     int64
	sums     []int64 // running totals of wxSums
}

// wxAmounts are the values of one row's wxSums columns.
type wxAmounts [len(wxSums)]int64

func (wechatPayParser) Parse(ctx context.Context, r io.Reader, opts Options, emit func(reconcile.Transaction) error) error {
	rows, err := newRowSink(ctx, opts, emit)
	if err != nil {
		return err
	}
	// WeChat Pay never quotes a field: every CR but a CRLF's is bare.
	b := &wxBill{columns: columns{opts: opts}, loc: opts.location(), lines: newLineScanner(r, opts, false), digits: 2}
	if err := b.start(); err != nil {
		return err
	}
	if err := b.details(&rows); err != nil {
		return err
	}
	return b.end()
}

// start reads the detail header on line 1, or says why the file is no
// bill: empty, or WeChat's error reply saved in its place.
func (b *wxBill) start() error {
	first, ok := b.lines.next()
	if !ok {
		if b.lines.err != nil {
			return b.lines.err
		}
		return b.opts.errorf(0, "", "empty file")
	}
	if strings.TrimSpace(first) == "" {
		for {
			s, ok := b.lines.next()
			if !ok {
				if b.lines.err != nil {
					return b.lines.err
				}
				return b.opts.errorf(0, "", "empty file")
			}
			if strings.TrimSpace(s) != "" {
				return b.opts.errorf(1, "", "line 1 is empty; want the detail header")
			}
		}
	}
	if t := strings.TrimSpace(first); strings.HasPrefix(t, "<") || strings.HasPrefix(t, "{") {
		return b.replyError(first)
	}
	return b.header(first)
}

// details reads the detail rows into rows, then the summary after them.
func (b *wxBill) details(rows *rowSink) error {
	for {
		s, ok := b.lines.nextIn(b.opts.slabs)
		if !ok {
			if b.lines.err != nil {
				return b.lines.err
			}
			what := "the detail rows"
			if b.rows == 0 {
				what = "the header"
			}
			return b.opts.wrap(b.lines.line+1, wxCount, fmt.Errorf("%w: no summary section, the file ends after %s (truncated download?)", reconcile.ErrControlTotal, what))
		}
		trimmed := strings.TrimSpace(s)
		if trimmed == "" {
			continue
		}
		if strings.HasPrefix(strings.TrimPrefix(trimmed, "`"), wxCount) {
			if err := b.summary(s, b.lines.line); err != nil {
				if b.lines.err != nil {
					return b.lines.err
				}
				return err
			}
			return nil
		}
		if err := rows.put(b.row(s, b.lines.line)); err != nil {
			return err
		}
	}
}

// end reads what follows the summary row: blank lines at most.
func (b *wxBill) end() error {
	for {
		s, ok := b.lines.next()
		if !ok {
			return b.lines.err
		}
		if strings.TrimSpace(s) != "" {
			return b.opts.errorf(b.lines.line, "", "unexpected line after the summary row")
		}
	}
}

var (
	wxReturnMsg = regexp.MustCompile(`<(return_msg|err_code_des)>\s*(?:<!\[CDATA\[)?(.*?)(?:\]\]>)?\s*</(?:return_msg|err_code_des)>`)
	wxJSONMsg   = regexp.MustCompile(`"message"\s*:\s*"([^"]*)"`)
)

// replyError explains a file that is WeChat's error reply (XML from v2,
// JSON from v3) saved in place of the bill, quoting WeChat's message.
func (b *wxBill) replyError(first string) error {
	const limit = 4 << 10
	var sb strings.Builder
	sb.WriteString(first)
	for sb.Len() < limit {
		s, ok := b.lines.next()
		if !ok {
			break
		}
		sb.WriteString("\n")
		sb.WriteString(s)
	}
	body := sb.String()
	kind, msg := "an XML", ""
	if strings.HasPrefix(strings.TrimSpace(first), "{") {
		kind = "a JSON"
		if m := wxJSONMsg.FindStringSubmatch(body); m != nil {
			msg = m[1]
		}
	} else {
		var parts []string
		for _, m := range wxReturnMsg.FindAllStringSubmatch(body, -1) {
			if m[2] != "" {
				parts = append(parts, m[2])
			}
		}
		msg = strings.Join(parts, "; ")
	}
	if msg == "" {
		msg = strings.TrimSpace(first)
	}
	// Quoted and cut like any value from a file: cutting bytes, as this
	// did, could split a character and leave the error no valid text.
	return b.opts.errorf(1, "", "WeChat Pay sent %s error reply instead of a bill: %s", kind, reconcile.Quote(msg))
}

// splitHeader splits a header line, which is plain comma-separated text;
// a leading backtick is dropped too, as some tools write one.
func splitHeader(s string) []string {
	cells := strings.Split(s, ",")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c), "`"))
	}
	return cells
}

// splitRow splits a data row into dst[:0]: drop the first backtick, split
// on ",`", which also drops each later field's backtick. A comma not
// followed by a backtick is text.
func splitRow(dst []string, s string) ([]string, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "`") {
		return nil, false
	}
	fields := dst[:0]
	start := 1
	for i := 1; i+1 < len(s); i++ {
		if i+8 <= len(s) {
			// To the next comma eight bytes at a time (see commas).
			m := commas(s[i : i+8])
			if m == 0 {
				i += 7
				continue
			}
			if i += bits.TrailingZeros64(m) / 8; i+1 == len(s) {
				break
			}
		}
		if s[i] == ',' && s[i+1] == '`' {
			fields = append(fields, trimSpace(s[start:i]))
			i++
			start = i + 1
		}
	}
	return append(fields, trimSpace(s[start:])), true
}

// commas marks the commas among the eight bytes of w: the high bit of
// each comma's byte is set, and maybe of bytes above the first comma,
// whose byte is the lowest marked. A row of the bill is mostly text
// between separators: read a word at a time, its scan takes a few steps
// a field, where a loop over its bytes took one a byte, at a speed that
// changed by a tenth with where the linker placed the loop.
func commas(w string) uint64 {
	const ones = 0x0101010101010101
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	x ^= ',' * ones
	return (x - ones) &^ x & (0x80 * ones)
}

func (b *wxBill) header(s string) error {
	names := splitHeader(s)
	if err := b.opts.checkHeader(1, names); err != nil {
		return err
	}
	b.columns = newColumns(b.opts, names, wxColumns[:])
	if err := b.findColumns(); err != nil {
		return err
	}
	if err := b.amountColumns(); err != nil {
		return err
	}
	b.sumColumns()
	return nil
}

// findColumns maps the header's names, old ones through wxAliases, onto
// their fields, and checks that the required ones are there. Any column
// named twice is refused, whether it is read or not.
func (b *wxBill) findColumns() error {
	cols := make(map[string]int, len(b.names))
	for i, name := range b.names {
		canon := name
		if a, ok := wxAliases[name]; ok {
			canon = a
		}
		if canon == "" {
			continue
		}
		if j, dup := cols[canon]; dup {
			return b.opts.errorf(1, name, "duplicate column (fields %d and %d)", j+1, i+1)
		}
		cols[canon] = i
	}
	for c, canon := range wxColumns {
		if i, ok := cols[canon]; ok {
			b.at[c] = int32(i)
		}
	}
	for _, c := range wxRequired {
		if !b.has(c) {
			return b.opts.errorf(1, wxColumns[c], "missing required column")
		}
	}
	return nil
}

// amountColumns chooses payAmount and refundAmount. A SUCCESS bill has no
// refund columns; any other needs all of them.
func (b *wxBill) amountColumns() error {
	var err error
	b.refundAmount = -1
	if b.payAmount, err = b.either(wxOrderAmount, wxSettle, "应结订单金额/总金额"); err != nil {
		return err
	}
	if !b.has(wxRefundNo) && !b.has(wxRefundID) && !b.has(wxRefundState) {
		return nil
	}
	for _, c := range []int{wxRefundNo, wxRefundID, wxRefundState} {
		if !b.has(c) {
			return b.opts.errorf(1, wxColumns[c], "missing required column")
		}
	}
	b.refundAmount, err = b.either(wxRefundApplied, wxRefundAmount, wxColumns[wxRefundAmount])
	return err
}

// either is column, or the pre-2018 column older when the layout lacks
// it; the error for neither names column, and older as nor says.
func (b *wxBill) either(column, older int, nor string) (int, error) {
	switch {
	case b.has(column):
		return column, nil
	case b.has(older):
		return older, nil
	}
	return -1, b.opts.errorf(1, wxColumns[column], "missing required column (nor %s)", nor)
}

// sumColumns readies the running totals of wxSums, and finds the entries
// of the amount columns among them.
func (b *wxBill) sumColumns() {
	b.sums = make([]int64, len(wxSums))
	b.kPay, b.kRefund, b.kFee = -1, -1, -1
	for k, c := range wxSums {
		switch c.column {
		case b.payAmount:
			b.kPay = k
		case b.refundAmount:
			b.kRefund = k
		case wxFee:
			b.kFee = k
		}
	}
}

// wxAmount is amount k of a row; a missing column (-1) reads as zero, as
// an empty field does.
func wxAmount(vals *wxAmounts, k int) int64 {
	if k < 0 {
		return 0
	}
	return vals[k]
}

// row reads a detail row. The usual time and currency are read on a fast
// path here; the general parsers, and the errors, are in the functions
// after it, called when the fast path does not read the field.
func (b *wxBill) row(s string, line int) (t reconcile.Transaction, err error) {
	f, err := b.split(s, line)
	if err != nil {
		return t, err
	}
	b.rows++
	t = reconcile.Transaction{
		RawKind:      b.field(f, wxState),
		OrderNo:      b.field(f, wxOrderNo),
		ChannelTxnID: b.field(f, wxTxnID),
		Currency:     b.field(f, wxCurrency),
		Line:         line,
	}
	if t.RawKind == "" {
		return t, b.errorf(line, wxState, "empty 交易状态")
	}
	var ok bool
	at := b.field(f, wxTime)
	if t.OccurredAt, ok = dateTime(at, b.loc); !ok {
		if t.OccurredAt, err = b.time(at, line); err != nil {
			return t, err
		}
	}
	if b.currency == "" || t.Currency != b.currency {
		if err := b.setCurrency(t.Currency, line); err != nil {
			return t, err
		}
	}
	var vals wxAmounts
	if err := b.sum(f, line, &vals); err != nil {
		return t, err
	}
	t.FeeMilli = wxAmount(&vals, b.kFee)
	t.FeeRate = b.field(f, wxRate)
	err = b.classify(&t, f, &vals, line)
	return t, err
}

// split cuts s into the fields of a detail row and checks them as text.
func (b *wxBill) split(s string, line int) ([]string, error) {
	f, ok := splitRow(b.fields, s)
	if !ok {
		return nil, b.opts.errorf(line, "", "detail row does not start with a backtick")
	}
	b.fields = f
	if len(f) != len(b.names) {
		return nil, b.opts.errorf(line, "", "row has %d fields, header has %d", len(f), len(b.names))
	}
	// The fields are the line cut at ASCII separators and trimmed of
	// whole runes, so they are text reconcile.TextFault takes exactly when the line
	// is: one pass over the line, field by field only to name the bad one.
	if reconcile.TextFault(s) != "" {
		if err := b.opts.checkRow(line, f, b.names); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (b *wxBill) time(at string, line int) (time.Time, error) {
	t, err := time.ParseInLocation(wxTimeLayout, at, b.loc)
	if err != nil {
		return t, b.errorf(line, wxTime, "%s: want YYYY-MM-DD HH:MM:SS", reconcile.Quote(at))
	}
	return t, nil
}

// setCurrency takes the currency of the first row as the bill's, whose
// digits the amounts are read with: the summary totals are in one
// currency, so every row must be in it.
func (b *wxBill) setCurrency(currency string, line int) error {
	digits, ok := reconcile.CurrencyDigits(currency)
	if !ok {
		return b.errorf(line, wxCurrency, "unknown currency %s", reconcile.Quote(currency))
	}
	if b.currency != "" {
		return b.errorf(line, wxCurrency, "currency %s in a bill of %s: the summary totals cannot be checked", currency, b.currency)
	}
	b.currency, b.digits = strings.Clone(currency), digits // kept beyond its row
	return nil
}

// sum reads every totalled column of row f into vals and adds it to its
// running total, whatever the row's kind, so the sums compare with the
// summary. An empty field counts as zero: which columns WeChat fills on
// unusual rows is not documented.
func (b *wxBill) sum(f []string, line int, vals *wxAmounts) error {
	for k, c := range wxSums {
		i := b.at[c.column]
		if i < 0 || f[i] == "" {
			continue
		}
		// The fee may be negative: a refund returns its share of it.
		scale := b.digits
		if c.fee {
			scale += 3
		}
		v, err := b.money(f, line, c.column, scale, c.fee)
		if err != nil {
			return err
		}
		sum, ok := reconcile.AddChecked(b.sums[k], v)
		if !ok {
			return b.errorf(line, c.column, "column total overflows")
		}
		b.sums[k] = sum
		vals[k] = v
	}
	return nil
}

// classify sets the kind, amount and status of t, read from its
// 交易状态.
func (b *wxBill) classify(t *reconcile.Transaction, f []string, vals *wxAmounts, line int) error {
	switch strings.ToUpper(t.RawKind) {
	case "SUCCESS":
		t.Kind = reconcile.KindPayment
		t.Status = reconcile.StatusSuccess
		if t.OrderNo == "" {
			return b.errorf(line, wxOrderNo, "empty order number on a payment row")
		}
		if b.field(f, b.payAmount) == "" {
			return b.errorf(line, b.payAmount, "empty amount")
		}
		t.Amount = wxAmount(vals, b.kPay)
	case "REFUND":
		return b.refund(t, f, vals, line)
	default:
		// REVOKED or a word WeChat added later: kept for review with what
		// it has. A revoked payment moved no money; for an unknown word the
		// outcome is not known, which processing says.
		t.Kind = reconcile.KindOther
		t.Amount = wxAmount(vals, b.kPay)
		t.Status = reconcile.StatusProcessing
		if strings.EqualFold(t.RawKind, "REVOKED") {
			t.Status = reconcile.StatusFailed
		}
	}
	return nil
}

// refund reads the refund of a REFUND row.
func (b *wxBill) refund(t *reconcile.Transaction, f []string, vals *wxAmounts, line int) error {
	t.Kind = reconcile.KindRefund
	if b.refundAmount < 0 {
		return b.opts.errorf(line, "", "refund row in a bill without refund columns")
	}
	// Payment rows carry "0" as refund number; on a refund row it
	// would become a key shared by unrelated refunds.
	t.RefundNo = b.field(f, wxRefundNo)
	t.ChannelTxnID = b.field(f, wxRefundID)
	if t.RefundNo == "" || t.RefundNo == "0" {
		// Matched by 微信退款单号 instead, where the row has one.
		if t.ChannelTxnID == "" || t.ChannelTxnID == "0" {
			return b.errorf(line, wxRefundNo, "refund row without a refund number (%s) or a 微信退款单号", reconcile.Quote(t.RefundNo))
		}
		t.RefundNo = ""
	}
	if b.field(f, b.refundAmount) == "" {
		return b.errorf(line, b.refundAmount, "empty amount")
	}
	t.Amount = wxAmount(vals, b.kRefund)
	// 退款状态 is a snapshot taken when the bill was cut.
	switch st := b.field(f, wxRefundState); strings.ToUpper(st) {
	case "SUCCESS":
		t.Status = reconcile.StatusSuccess
	case "PROCESSING", "CHANGE":
		t.Status = reconcile.StatusProcessing
	case "REFUNDCLOSE":
		t.Status = reconcile.StatusFailed
	case "":
		return b.errorf(line, wxRefundState, "empty refund status on a refund row")
	default:
		return b.errorf(line, wxRefundState, "unknown refund status %s (want SUCCESS, PROCESSING, CHANGE or REFUNDCLOSE)", reconcile.Quote(st))
	}
	return nil
}

// summary reads the summary header at line and the summary row after it,
// and checks them against the detail rows read.
func (b *wxBill) summary(s string, line int) error {
	names := splitHeader(s)
	if err := b.opts.checkHeader(line, names); err != nil {
		return err
	}
	at := make(map[string]int, len(names))
	for i, n := range names {
		if j, dup := at[n]; dup && n != "" {
			return b.opts.errorf(line, n, "duplicate summary column (fields %d and %d)", j+1, i+1)
		}
		at[n] = i
	}
	vals, rowLine, err := b.summaryRow(names, line)
	if err != nil {
		return err
	}

	// The count comes first: a missing row explains any sum that is off.
	i, ok := at[wxCount]
	if !ok {
		return b.opts.errorf(line, wxCount, "summary header lacks the column")
	}
	n, err := reconcile.ParseDecimal(vals[i], 0) // "45.0" occurs
	if err != nil {
		return b.opts.errorf(rowLine, names[i], "%w", err)
	}
	if n != b.rows {
		return b.opts.wrap(rowLine, names[i], fmt.Errorf("%w: summary says %d rows, file has %d", reconcile.ErrControlTotal, n, b.rows))
	}
	return b.checkSums(names, vals, rowLine)
}

// summaryRow reads the summary row, the first line after the summary
// header at line that is not blank, and returns its fields and line.
func (b *wxBill) summaryRow(names []string, line int) ([]string, int, error) {
	var row string
	ok := false
	for !ok || strings.TrimSpace(row) == "" {
		row, ok = b.lines.next()
		if !ok {
			return nil, 0, b.opts.wrap(line+1, wxCount, fmt.Errorf("%w: no summary row after the summary header (truncated download?)", reconcile.ErrControlTotal))
		}
		line++
	}
	vals, ok := splitRow(nil, row)
	if !ok {
		return nil, 0, b.opts.errorf(line, "", "summary row does not start with a backtick")
	}
	if len(vals) != len(names) {
		return nil, 0, b.opts.errorf(line, "", "summary row has %d fields, summary header has %d", len(vals), len(names))
	}
	if err := b.opts.checkRow(line, vals, names); err != nil {
		return nil, 0, err
	}
	return vals, line, nil
}

// checkSums compares each summary column of wxSummaryOf with the sum of
// the detail column it totals.
func (b *wxBill) checkSums(names, vals []string, line int) error {
	for i, name := range names {
		col, ok := wxSummaryOf[name]
		if !ok {
			continue
		}
		scale := b.digits
		var got int64 // a column the layout lacks sums to zero
		for k, c := range wxSums {
			if c.column == col {
				got = b.sums[k]
				if c.fee {
					scale += 3
				}
			}
		}
		want, err := reconcile.ParseDecimal(vals[i], scale)
		if err != nil {
			return b.opts.errorf(line, name, "%w", err)
		}
		if want != got {
			return b.opts.wrap(line, name, fmt.Errorf("%w: summary says %s, rows sum to %s",
				reconcile.ErrControlTotal, reconcile.FormatDecimal(want, scale), reconcile.FormatDecimal(got, scale)))
		}
	}
	return nil
}
