package channelfeed

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

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
type wechatPayParser struct{}

var _ Parser = wechatPayParser{}

// Detail columns read by name.
const (
	wxTime           = "交易时间"
	wxTxnID          = "微信订单号"
	wxOrderNo        = "商户订单号"
	wxState          = "交易状态"
	wxCurrency       = "货币种类"
	wxSettle         = "应结订单金额"
	wxRefundID       = "微信退款单号"
	wxRefundNo       = "商户退款单号"
	wxRefundAmount   = "退款金额"
	wxRechargeRefund = "充值券退款金额"
	wxRefundState    = "退款状态"
	wxFee            = "手续费"
	wxOrderAmount    = "订单金额"
	wxRefundApplied  = "申请退款金额"
	wxCount          = "总交易单数"
)

var wxRequired = []string{wxTime, wxTxnID, wxOrderNo, wxState, wxCurrency}

// wxAliases maps pre-2018 header names onto today's, so one mapping reads
// both layouts.
var wxAliases = map[string]string{
	"子商户号":       "特约商户号",
	"总金额":        wxSettle,
	"代金券或立减优惠金额": "代金券金额",
	"企业红包金额":     "代金券金额",
}

// wxSums are the detail columns the summary row totals; 手续费 has three
// more decimals than the currency.
var wxSums = [...]struct {
	column string
	fee    bool
}{
	{wxSettle, false},
	{wxRefundAmount, false},
	{wxRechargeRefund, false},
	{"代金券或立减优惠退款金额", false},
	{"企业红包退款金额", false},
	{wxOrderAmount, false},
	{wxRefundApplied, false},
	{wxFee, true},
}

// wxSummaryOf maps a summary column onto the detail column it totals.
// Summary columns not listed are not checked.
var wxSummaryOf = map[string]string{
	"应结订单总金额":       wxSettle,
	"总交易额":          wxSettle, // pre-2018: Σ总金额
	"退款总金额":         wxRefundAmount,
	"总退款金额":         wxRefundAmount,
	"充值券退款总金额":      wxRechargeRefund,
	"总代金券或立减优惠退款金额": "代金券或立减优惠退款金额",
	"总企业红包退款金额":     "企业红包退款金额",
	"手续费总金额":        wxFee,
	"订单总金额":         wxOrderAmount,
	"申请退款总金额":       wxRefundApplied,
}

const wxTimeLayout = "2006-01-02 15:04:05"

// wxBill is the state of one bill being read.
type wxBill struct {
	opts Options
	loc  *time.Location

	names []string       // header names as written, for errors
	cols  map[string]int // canonical name → field index
	// payAmount and refundAmount name the columns compared for each kind:
	// 订单金额 and 申请退款金额, or the pre-2018 应结订单金额 (总金额) and
	// 退款金额 when the layout lacks them.
	payAmount, refundAmount string
	sumIdx                  []int // field index of each wxSums column, -1 when absent

	// Field indexes of the columns each row reads, -1 when absent, and
	// the wxSums entries of the amount columns: looked up once in the
	// header rather than by name on every row.
	iTime, iTxnID, iOrderNo, iState, iCurrency int
	iRefundNo, iRefundID, iRefundState         int
	kPay, kRefund, kFee                        int
	fields                                     []string // reused by every row

	currency string
	digits   int
	rows     int64
	sums     []int64 // running totals of wxSums
}

func (wechatPayParser) Parse(ctx context.Context, r io.Reader, opts Options, emit func(reconcile.Transaction) error) error {
	if emit == nil {
		emit = discard
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b := &wxBill{opts: opts, loc: opts.location(), digits: 2}
	// WeChat Pay never quotes a field: every CR but a CRLF's is bare.
	lines := newLineScanner(r, opts, false)
	next := func() (string, bool) {
		if !lines.scan() {
			return "", false
		}
		s := string(lines.bytes())
		if lines.line == 1 {
			s = strings.TrimPrefix(s, "\uFEFF")
		}
		return s, true
	}

	first, ok := next()
	if !ok {
		if lines.err != nil {
			return lines.err
		}
		return opts.errorf(0, "", "empty file")
	}
	if strings.TrimSpace(first) == "" {
		for {
			s, ok := next()
			if !ok {
				if lines.err != nil {
					return lines.err
				}
				return opts.errorf(0, "", "empty file")
			}
			if strings.TrimSpace(s) != "" {
				return opts.errorf(1, "", "line 1 is empty; want the detail header")
			}
		}
	}
	if t := strings.TrimSpace(first); strings.HasPrefix(t, "<") || strings.HasPrefix(t, "{") {
		return b.replyError(first, next)
	}
	if err := b.header(first); err != nil {
		return err
	}

	// Detail rows, up to the summary header.
	for {
		s, ok := next()
		if !ok {
			if lines.err != nil {
				return lines.err
			}
			what := "the detail rows"
			if b.rows == 0 {
				what = "the header"
			}
			return opts.wrap(lines.line+1, wxCount, fmt.Errorf("%w: no summary section, the file ends after %s (truncated download?)", reconcile.ErrControlTotal, what))
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		if strings.HasPrefix(strings.TrimPrefix(strings.TrimSpace(s), "`"), wxCount) {
			if err := b.summary(s, lines.line, next); err != nil {
				if lines.err != nil {
					return lines.err
				}
				return err
			}
			break
		}
		t, err := b.row(s, lines.line)
		if err != nil {
			return err
		}
		if err := emit(t); err != nil {
			return err
		}
		if b.rows%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}

	for {
		s, ok := next()
		if !ok {
			break
		}
		if strings.TrimSpace(s) != "" {
			return opts.errorf(lines.line, "", "unexpected line after the summary row")
		}
	}
	return lines.err
}

var (
	wxReturnMsg = regexp.MustCompile(`<(return_msg|err_code_des)>\s*(?:<!\[CDATA\[)?(.*?)(?:\]\]>)?\s*</(?:return_msg|err_code_des)>`)
	wxJSONMsg   = regexp.MustCompile(`"message"\s*:\s*"([^"]*)"`)
)

// replyError explains a file that is WeChat's error reply (XML from v2,
// JSON from v3) saved in place of the bill, quoting WeChat's message.
func (b *wxBill) replyError(first string, next func() (string, bool)) error {
	const limit = 4 << 10
	var sb strings.Builder
	sb.WriteString(first)
	for sb.Len() < limit {
		s, ok := next()
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
		if s[i] == ',' && s[i+1] == '`' {
			fields = append(fields, trimSpace(s[start:i]))
			i++
			start = i + 1
		}
	}
	return append(fields, trimSpace(s[start:])), true
}

// trimSpace is strings.TrimSpace, which a field starting and ending with
// printable ASCII cannot change: most fields are, and the check is much
// cheaper than the call on a bill of millions of fields.
func trimSpace(s string) string {
	if s != "" && s[0] > ' ' && s[0] < utf8.RuneSelf && s[len(s)-1] > ' ' && s[len(s)-1] < utf8.RuneSelf {
		return s
	}
	return strings.TrimSpace(s)
}

func (b *wxBill) header(s string) error {
	b.names = splitHeader(s)
	if err := b.opts.checkHeader(1, b.names); err != nil {
		return err
	}
	b.cols = make(map[string]int, len(b.names))
	for i, name := range b.names {
		canon := name
		if a, ok := wxAliases[name]; ok {
			canon = a
		}
		if canon == "" {
			continue
		}
		if j, dup := b.cols[canon]; dup {
			return b.opts.errorf(1, name, "duplicate column (fields %d and %d)", j+1, i+1)
		}
		b.cols[canon] = i
	}
	for _, c := range wxRequired {
		if _, ok := b.cols[c]; !ok {
			return b.opts.errorf(1, c, "missing required column")
		}
	}
	switch {
	case b.has(wxOrderAmount):
		b.payAmount = wxOrderAmount
	case b.has(wxSettle):
		b.payAmount = wxSettle
	default:
		return b.opts.errorf(1, wxOrderAmount, "missing required column (nor 应结订单金额/总金额)")
	}
	// A SUCCESS bill has no refund columns; any other needs all of them.
	if b.has(wxRefundNo) || b.has(wxRefundID) || b.has(wxRefundState) {
		for _, c := range []string{wxRefundNo, wxRefundID, wxRefundState} {
			if !b.has(c) {
				return b.opts.errorf(1, c, "missing required column")
			}
		}
		switch {
		case b.has(wxRefundApplied):
			b.refundAmount = wxRefundApplied
		case b.has(wxRefundAmount):
			b.refundAmount = wxRefundAmount
		default:
			return b.opts.errorf(1, wxRefundApplied, "missing required column (nor 退款金额)")
		}
	}
	b.sumIdx = make([]int, len(wxSums))
	b.sums = make([]int64, len(wxSums))
	b.kPay, b.kRefund, b.kFee = -1, -1, -1
	for k, c := range wxSums {
		b.sumIdx[k] = -1
		if i, ok := b.cols[c.column]; ok {
			b.sumIdx[k] = i
		}
		switch c.column {
		case b.payAmount:
			b.kPay = k
		case b.refundAmount:
			b.kRefund = k
		case wxFee:
			b.kFee = k
		}
	}
	b.iTime, b.iTxnID, b.iOrderNo = b.index(wxTime), b.index(wxTxnID), b.index(wxOrderNo)
	b.iState, b.iCurrency = b.index(wxState), b.index(wxCurrency)
	b.iRefundNo, b.iRefundID, b.iRefundState = b.index(wxRefundNo), b.index(wxRefundID), b.index(wxRefundState)
	return nil
}

// index is the field index of a canonical column, -1 when absent.
func (b *wxBill) index(canon string) int {
	if i, ok := b.cols[canon]; ok {
		return i
	}
	return -1
}

func (b *wxBill) has(canon string) bool {
	_, ok := b.cols[canon]
	return ok
}

// name is the header name of a canonical column as the file spells it.
func (b *wxBill) name(canon string) string {
	if i, ok := b.cols[canon]; ok {
		return b.names[i]
	}
	return canon
}

func (b *wxBill) row(s string, line int) (reconcile.Transaction, error) {
	opts := b.opts
	f, ok := splitRow(b.fields, s)
	if !ok {
		return reconcile.Transaction{}, opts.errorf(line, "", "detail row does not start with a backtick")
	}
	b.fields = f
	if len(f) != len(b.names) {
		return reconcile.Transaction{}, opts.errorf(line, "", "row has %d fields, header has %d", len(f), len(b.names))
	}
	// The fields are the line cut at ASCII separators and trimmed of
	// whole runes, so they are text reconcile.TextFault takes exactly when the line
	// is: one pass over the line, field by field only to name the bad one.
	if reconcile.TextFault(s) != "" {
		if err := opts.checkRow(line, f, b.names); err != nil {
			return reconcile.Transaction{}, err
		}
	}
	b.rows++
	get := func(i int) string {
		if i < 0 {
			return ""
		}
		return f[i]
	}

	t := reconcile.Transaction{
		RawKind:      get(b.iState),
		OrderNo:      get(b.iOrderNo),
		ChannelTxnID: get(b.iTxnID),
		Currency:     get(b.iCurrency),
		Line:         line,
	}
	if t.RawKind == "" {
		return t, opts.errorf(line, b.name(wxState), "empty 交易状态")
	}
	var err error
	at := get(b.iTime)
	t.OccurredAt, ok = dateTime(at, b.loc)
	if !ok {
		t.OccurredAt, err = time.ParseInLocation(wxTimeLayout, at, b.loc)
		if err != nil {
			return t, opts.errorf(line, b.name(wxTime), "%s: want YYYY-MM-DD HH:MM:SS", reconcile.Quote(at))
		}
	}
	digits := b.digits
	if b.currency == "" || t.Currency != b.currency {
		digits, ok = reconcile.CurrencyDigits(t.Currency)
		if !ok {
			return t, opts.errorf(line, b.name(wxCurrency), "unknown currency %s", reconcile.Quote(t.Currency))
		}
	}
	if b.currency == "" {
		b.currency, b.digits = t.Currency, digits
	} else if t.Currency != b.currency {
		return t, opts.errorf(line, b.name(wxCurrency), "currency %s in a bill of %s: the summary totals cannot be checked", t.Currency, b.currency)
	}

	// Every totalled column is read on every row, whatever its kind, so
	// the sums compare with the summary. An empty field counts as zero:
	// which columns WeChat fills on unusual rows is not documented.
	var vals [len(wxSums)]int64
	for k, c := range wxSums {
		i := b.sumIdx[k]
		if i < 0 || f[i] == "" {
			continue
		}
		var v int64
		if c.fee {
			// May be negative: a refund returns its share of the fee.
			if v, ok = signedDecimal(f[i], digits+3); !ok {
				v, err = reconcile.ParseDecimal(f[i], digits+3)
			}
		} else if v, ok = plainDecimal(f[i], digits); !ok {
			v, err = parseAmount(f[i], t.Currency)
		}
		if err != nil {
			return t, opts.errorf(line, b.names[i], "%w", err)
		}
		sum, ok := addChecked(b.sums[k], v)
		if !ok {
			return t, opts.errorf(line, b.names[i], "column total overflows")
		}
		b.sums[k] = sum
		vals[k] = v
	}
	// A missing column reads as zero, as an empty field does.
	val := func(k int) int64 {
		if k < 0 {
			return 0
		}
		return vals[k]
	}
	t.FeeMilli = val(b.kFee)

	switch strings.ToUpper(t.RawKind) {
	case "SUCCESS":
		t.Kind = reconcile.KindPayment
		t.Status = reconcile.StatusSuccess
		if t.OrderNo == "" {
			return t, opts.errorf(line, b.name(wxOrderNo), "empty order number on a payment row")
		}
		if get(b.sumIdx[b.kPay]) == "" {
			return t, opts.errorf(line, b.name(b.payAmount), "empty amount")
		}
		t.Amount = val(b.kPay)
	case "REFUND":
		t.Kind = reconcile.KindRefund
		if b.refundAmount == "" {
			return t, opts.errorf(line, "", "refund row in a bill without refund columns")
		}
		// Payment rows carry "0" as refund number; on a refund row it
		// would become a key shared by unrelated refunds.
		t.RefundNo = get(b.iRefundNo)
		if t.RefundNo == "" || t.RefundNo == "0" {
			return t, opts.errorf(line, b.name(wxRefundNo), "refund row without a refund number (%s)", reconcile.Quote(t.RefundNo))
		}
		t.ChannelTxnID = get(b.iRefundID)
		if get(b.sumIdx[b.kRefund]) == "" {
			return t, opts.errorf(line, b.name(b.refundAmount), "empty amount")
		}
		t.Amount = val(b.kRefund)
		// 退款状态 is a snapshot taken when the bill was cut.
		switch st := get(b.iRefundState); strings.ToUpper(st) {
		case "SUCCESS":
			t.Status = reconcile.StatusSuccess
		case "PROCESSING", "CHANGE":
			t.Status = reconcile.StatusProcessing
		case "REFUNDCLOSE":
			t.Status = reconcile.StatusFailed
		case "":
			return t, opts.errorf(line, b.name(wxRefundState), "empty refund status on a refund row")
		default:
			return t, opts.errorf(line, b.name(wxRefundState), "unknown refund status %s (want SUCCESS, PROCESSING, CHANGE or REFUNDCLOSE)", reconcile.Quote(st))
		}
	default:
		// REVOKED or a word WeChat added later: kept for review with what
		// it has. A revoked payment moved no money; for an unknown word the
		// outcome is not known, which processing says.
		t.Kind = reconcile.KindOther
		t.Amount = val(b.kPay)
		t.Status = reconcile.StatusProcessing
		if strings.EqualFold(t.RawKind, "REVOKED") {
			t.Status = reconcile.StatusFailed
		}
	}
	return t, nil
}

// summary reads the summary header at line and the summary row after it,
// and checks them against the detail rows read.
func (b *wxBill) summary(s string, line int, next func() (string, bool)) error {
	opts := b.opts
	headerLine := line
	names := splitHeader(s)
	if err := opts.checkHeader(line, names); err != nil {
		return err
	}
	at := make(map[string]int, len(names))
	for i, n := range names {
		if j, dup := at[n]; dup && n != "" {
			return opts.errorf(line, n, "duplicate summary column (fields %d and %d)", j+1, i+1)
		}
		at[n] = i
	}

	var row string
	ok := false
	for !ok || strings.TrimSpace(row) == "" {
		row, ok = next()
		if !ok {
			return opts.wrap(line+1, wxCount, fmt.Errorf("%w: no summary row after the summary header (truncated download?)", reconcile.ErrControlTotal))
		}
		line++
	}
	vals, ok := splitRow(nil, row)
	if !ok {
		return opts.errorf(line, "", "summary row does not start with a backtick")
	}
	if len(vals) != len(names) {
		return opts.errorf(line, "", "summary row has %d fields, summary header has %d", len(vals), len(names))
	}
	if err := opts.checkRow(line, vals, names); err != nil {
		return err
	}

	// The count comes first: a missing row explains any sum that is off.
	i, ok := at[wxCount]
	if !ok {
		return opts.errorf(headerLine, wxCount, "summary header lacks the column")
	}
	n, err := reconcile.ParseDecimal(vals[i], 0) // "45.0" occurs
	if err != nil {
		return opts.errorf(line, names[i], "%w", err)
	}
	if n != b.rows {
		return opts.wrap(line, names[i], fmt.Errorf("%w: summary says %d rows, file has %d", reconcile.ErrControlTotal, n, b.rows))
	}
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
			return opts.errorf(line, name, "%w", err)
		}
		if want != got {
			return opts.wrap(line, name, fmt.Errorf("%w: summary says %s, rows sum to %s",
				reconcile.ErrControlTotal, reconcile.FormatDecimal(want, scale), reconcile.FormatDecimal(got, scale)))
		}
	}
	return nil
}
