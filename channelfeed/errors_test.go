package channelfeed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reconcile"
)

// badCase is an input that must be refused with a *reconcile.ParseError
// at Line and Column whose message contains msg.
type badCase struct {
	name    string
	input   string
	line    int
	column  string
	msg     string
	control bool // wraps reconcile.ErrControlTotal
}

func runBad(t *testing.T, format string, tests []badCase) {
	t.Helper()
	runBadWith(t, format, Options{Location: shanghai}, tests)
}

// runBadWith is runBad with the parser settings of a channel, such as the
// mapping of a "mapped" file; the file is always named bill.csv.
func runBadWith(t *testing.T, format string, opts Options, tests []badCase) {
	t.Helper()
	p, err := Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	opts.Name = "bill.csv"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Parse(t.Context(), strings.NewReader(tt.input), opts, nil)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			var pe *reconcile.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %q (%T) is not a *reconcile.ParseError", err, err)
			}
			if pe.File != "bill.csv" || pe.Line != tt.line || pe.Column != tt.column {
				t.Errorf("got file %q line %d column %q, want bill.csv line %d column %q (%v)", pe.File, pe.Line, pe.Column, tt.line, tt.column, err)
			}
			if got := errors.Is(err, reconcile.ErrControlTotal); got != tt.control {
				t.Errorf("errors.Is(err, ErrControlTotal) = %v, want %v (%v)", got, tt.control, err)
			}
			msg := err.Error()
			where := "bill.csv: "
			if tt.line > 0 {
				where = fmt.Sprintf("bill.csv:%d: ", tt.line)
			}
			if tt.column != "" {
				where += "column " + tt.column + ": "
			}
			if !strings.HasPrefix(msg, where) {
				t.Errorf("message %q, want it to start with %q", msg, where)
			}
			if !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q, want it to contain %q", msg, tt.msg)
			}
		})
	}
}

// editor returns a function that replaces the one occurrence of old in
// base, so a test cannot silently edit nothing.
func editor(t *testing.T, base string) func(old, new string) string {
	return func(old, new string) string {
		t.Helper()
		if n := strings.Count(base, old); n != 1 {
			t.Fatalf("%q occurs %d times in the base input, want once", old, n)
		}
		return strings.Replace(base, old, new, 1)
	}
}

func readTestdata(t *testing.T, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const csvBase = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status\n" +
	"payment,ORD1,,TX1,99.80,CNY,2026-11-28T09:12:45+08:00,0.59880,SUCCESS\n" +
	"refund,ORD1,RF1,RTX1,10.00,CNY,2026-11-28T10:00:00+08:00,-0.06000,PROCESSING\n"

func TestCSVErrors(t *testing.T) {
	edit := editor(t, csvBase)
	amount := func(s string) string { return edit(",99.80,", ","+s+",") }
	// The payment made a chargeback of amount s.
	chargeback := func(s string) string { return edit("payment,ORD1,,TX1,99.80,", "chargeback,ORD1,,TX1,"+s+",") }
	runBad(t, "csv", []badCase{
		{"missing column", edit("amount,currency,", "amount,ccy,"), 1, "currency", "missing required column", false},
		{"duplicate column", edit(",fee,", ",amount,"), 1, "amount", "duplicate column", false},
		{"duplicate column other case", edit(",fee,", ",Type,"), 1, "Type", "duplicate column", false},
		{"ragged row", edit("0.59880,SUCCESS", "0.59880"), 2, "", "row has 8 fields, header has 9", false},
		{"thousands separator", amount(`"1,000.00"`), 2, "amount", `"1,000.00": not a plain decimal`, false},
		{"too many decimals", amount("12.345"), 2, "amount", `"12.345": more decimals than the currency has`, false},
		{"exponent", amount("1e3"), 2, "amount", `"1e3": not a plain decimal`, false},
		{"bare minus", amount("-"), 2, "amount", `"-"`, false},
		{"empty amount", amount(""), 2, "amount", "empty amount", false},
		{"negative amount", amount("-99.80"), 2, "amount", "unsigned", false},
		{"overflow", amount("99999999999999999999.00"), 2, "amount", "out of range", false},
		{"unknown currency", edit("99.80,CNY", "99.80,XXX"), 2, "currency", `unknown currency "XXX"`, false},
		{"lower-case currency", edit("99.80,CNY", "99.80,cny"), 2, "currency", `unknown currency "cny"`, false},
		{"bad time", edit("2026-11-28T09:12:45+08:00", "28/11/2026 09:12"), 2, "occurred_at", `"28/11/2026 09:12"`, false},
		{"time without zone or space", edit("2026-11-28T09:12:45+08:00", "2026-11-28T09:12:45"), 2, "occurred_at", "want RFC 3339", false},
		{"bad fee", edit("0.59880", "0.598801"), 2, "fee", "more decimals", false},
		{"unknown status", edit(",PROCESSING", ",DONE"), 3, "status", `unknown status "DONE"`, false},
		{"refund without refund_no or channel_txn_id", edit(",RF1,RTX1,", ",,,"), 3, "refund_no", "neither a refund number nor a channel_txn_id", false},
		{"payment with refund_no", edit("ORD1,,TX1", "ORD1,RF9,TX1"), 2, "refund_no", `refund number "RF9" on a payment row`, false},
		{"payment without order_no", edit("payment,ORD1,", "payment,,"), 2, "order_no", "empty order number", false},
		{"unparseable chargeback amount", chargeback("9x.80"), 2, "amount", `"9x.80": not a plain decimal`, false},
		{"chargeback amount of three decimals", chargeback("99.801"), 2, "amount", `"99.801": more decimals than the currency has`, false},
		{"negative chargeback amount", chargeback("-99.80"), 2, "amount", "unsigned", false},
		{"chargeback with refund_no", edit("payment,ORD1,,TX1", "second_chargeback,ORD1,RF9,TX1"), 2, "refund_no", `refund number "RF9" on a second_chargeback row`, false},
		{"reversal larger than its chargeback", editor(t, chargeback("99.80"))("refund,ORD1,RF1,RTX1,10.00", "chargeback_reversal,ORD1,,TX1,99.81"), 3, "amount",
			`chargeback reversal of 99.81 is more than the 99.80 the chargebacks of dispute "TX1" took before it in the file`, false},
		{"empty type", edit("refund,ORD1", ",ORD1"), 3, "type", "empty type", false},
		{"invalid UTF-8", edit("RTX1", "RTX\xff"), 3, "channel_txn_id", "invalid UTF-8", false},
		{"invalid UTF-8 in header", edit("status\n", "st\xffatus\n"), 1, "", "invalid UTF-8", false},
		{"bare quote", edit("ORD1,,TX1", `OR"D1,,TX1`), 2, "", "bare \"", false},
		{"unterminated quote", edit("10.00,CNY", `"10.00,CNY`), 3, "", "extraneous or missing \"", false},
		{"unterminated quote in the header", edit("type,order_no", `"type,order_no`), 3, "", `extraneous or missing " in quoted-field (byte 78 of the line; the record starts on line 1)`, false},
		{"header of one field", strings.ReplaceAll(csvBase, ",", ";"), 1, "type", `(77 bytes); one field: is the file separated by ";", not ","?)`, false},
		{"empty file", "", 0, "", "empty file", false},
		{"only a BOM", "\xef\xbb\xbf", 0, "", "empty file", false},
		{"only blank lines", "\n\n", 0, "", "empty file: no header row", false},
		{"order number too long", edit("payment,ORD1,,", "payment,"+long+",,"), 2, "", "order number of 2049 bytes; the job takes at most 2048", false},
		{"refund number too long", edit(",RF1,", ","+long+","), 3, "", "refund number of 2049 bytes", false},
		{"channel id too long", edit(",RTX1,", ","+long+","), 3, "", "channel id of 2049 bytes", false},
	})
}

// long is one byte past reconcile.MaxKeyBytes.
var long = strings.Repeat("K", reconcile.MaxKeyBytes+1)

func TestWeChatPayErrors(t *testing.T) {
	sample := readTestdata(t, "wechatpay", "sample", "input.csv")
	edit := editor(t, sample)
	// Line 2 is ORD202611280001; its 订单金额 follows 费率.
	amount := func(s string) string { return edit("`0.59400,`0.60%,`99.00,", "`0.59400,`0.60%,`"+s+",") }
	cut := func(at string) string {
		i := strings.Index(sample, at)
		if i < 0 {
			t.Fatalf("%q not in sample", at)
		}
		return sample[:i]
	}
	dropLine := func(containing string) string {
		lines := strings.SplitAfter(sample, "\n")
		var b strings.Builder
		for _, l := range lines {
			if !strings.Contains(l, containing) {
				b.WriteString(l)
			}
		}
		return b.String()
	}
	success := editor(t, readTestdata(t, "wechatpay", "success", "input.csv"))
	firstLine := sample[:strings.Index(sample, "\n")+1]

	runBad(t, "wechatpay", []badCase{
		{"missing column", edit("微信订单号,商户订单号", "微信单号,商户订单号"), 1, "微信订单号", "missing required column", false},
		{"order number too long", edit("`ORD202611280001,", "`"+long+","), 2, "", "order number of 2049 bytes", false},
		{"duplicate column", edit("用户标识", "商户订单号"), 1, "商户订单号", "duplicate column", false},
		{"duplicate column via alias", edit("设备号", "子商户号"), 1, "子商户号", "duplicate column", false},
		{"no amount column", editor(t, edit("订单金额,申请退款金额", "订单额,申请退款金额"))("应结订单金额", "应结额"), 1, "订单金额", "missing required column", false},
		{"ragged row", edit("`JSAPI,`SUCCESS,`CMB_DEBIT,", "`JSAPI,`SUCCESS,"), 2, "", "row has 26 fields, header has 27", false},
		{"row without backtick", edit("\n`2026-11-28 09:12:45,", "\n2026-11-28 09:12:45,"), 2, "", "does not start with a backtick", false},
		{"thousands separator", amount("1,000.00"), 2, "订单金额", `"1,000.00": not a plain decimal`, false},
		{"too many decimals", amount("12.345"), 2, "订单金额", `"12.345": more decimals than the currency has`, false},
		{"exponent", amount("1e3"), 2, "订单金额", `"1e3": not a plain decimal`, false},
		{"bare minus", amount("-"), 2, "订单金额", `"-"`, false},
		{"empty amount", amount(""), 2, "订单金额", "empty amount", false},
		{"negative amount", amount("-99.00"), 2, "订单金额", "unsigned", false},
		{"overflow", amount("99999999999999999999.00"), 2, "订单金额", "out of range", false},
		{"bad fee", edit("`0.59400,", "`0.594001,"), 2, "手续费", "more decimals", false},
		{"unknown currency", edit("`CMB_DEBIT,`CNY,", "`CMB_DEBIT,`XXX,"), 2, "货币种类", `unknown currency "XXX"`, false},
		{"mixed currencies", edit("`OTHERS,`CNY,`25.50", "`OTHERS,`USD,`25.50"), 3, "货币种类", "currency USD in a bill of CNY", false},
		{"bad time", edit("`2026-11-28 09:12:45,", "`2026-11-28T09:12:45,"), 2, "交易时间", `"2026-11-28T09:12:45"`, false},
		{"empty 交易状态", edit("`JSAPI,`SUCCESS,`CMB_DEBIT,", "`JSAPI,`,`CMB_DEBIT,"), 2, "交易状态", "empty 交易状态", false},
		{"unknown refund status", edit("`ORIGINAL,`PROCESSING,", "`ORIGINAL,`WEIRD,"), 15, "退款状态", `unknown refund status "WEIRD"`, false},
		{"empty refund status", edit("`ORIGINAL,`PROCESSING,", "`ORIGINAL,`,"), 15, "退款状态", "empty refund status", false},
		{"refund number 0, no refund id", edit("`50300099992026112800000000005,`RF202611280004,", "`0,`0,"), 15, "商户退款单号", "without a refund number", false},
		{"refund row in a SUCCESS bill", success("`JSAPI,`SUCCESS,", "`JSAPI,`REFUND,"), 2, "", "refund row in a bill without refund columns", false},
		{"invalid UTF-8", edit("会员年卡", "会员\xff\xfe"), 2, "商品名称", "invalid UTF-8", false},
		{"invalid UTF-8 in header", edit("费率备注", "费率\xff"), 1, "", "invalid UTF-8", false},
		{"line too long", edit("会员年卡", strings.Repeat("长", maxLine/3+1)), 2, "", "line longer than", false},
		{"control total mismatch", amount("89.00"), 18, "订单总金额", "control total does not add up: summary says 771.20, rows sum to 761.20", true},
		{"fee total mismatch", edit("`0.59400,", "`0.59500,"), 18, "手续费总金额", "summary says 2.68740, rows sum to 2.68840", true},
		{"row count mismatch", dropLine("RF202611280005"), 17, "总交易单数", "summary says 15 rows, file has 14", true},
		{"bad summary number", edit("`15,", "`15.5,"), 18, "总交易单数", `"15.5"`, false},
		{"ragged summary", edit("`15,", "`15,`0,"), 18, "", "summary row has 8 fields", false},
		{"truncated before summary", cut("总交易单数"), 17, "总交易单数", "no summary section", true},
		{"truncated after summary header", cut("`15,"), 18, "总交易单数", "no summary row", true},
		{"truncated mid-row", cut("`ORIGINAL,`SUCCESS,`T恤"), 16, "", "row has 18 fields, header has 27", false},
		{"header only", firstLine, 2, "总交易单数", "ends after the header", true},
		{"line after summary", sample + "`16,`1.00\r\n", 19, "", "unexpected line after the summary row", false},
		{"empty file", "", 0, "", "empty file", false},
		{"only a BOM and blank lines", "\uFEFF\r\n\r\n", 0, "", "empty file", false},
		{"blank first line", "\n" + sample[len("\uFEFF"):], 1, "", "line 1 is empty", false},
		{"XML error reply", "<xml><return_code><![CDATA[FAIL]]></return_code>\n<return_msg><![CDATA[No Bill Exist]]></return_msg>\n<error_code><![CDATA[20002]]></error_code>\n</xml>", 1, "", `XML error reply instead of a bill: "No Bill Exist"`, false},
		{"XML error reply without message", "<xml><return_code>FAIL</return_code></xml>", 1, "", `XML error reply instead of a bill: "<xml><return_code>FAIL</return_code></xml>"`, false},
		{"JSON error reply", `{"code":"NO_STATEMENT_EXIST","message":"要下载的账单不存在"}`, 1, "", `JSON error reply instead of a bill: "要下载的账单不存在"`, false},
	})
}
