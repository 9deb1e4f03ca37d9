package channelfeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"

	"reconcile"
)

// mappedBaseInput is read with mappedBase: a signed, major-unit file with a
// status column, times in Europe/Berlin.
const mappedBaseInput = "type,order,refund,txn,amount,currency,time,fee,status\n" +
	"SALE,ORD1,,TX1,99.80,EUR,2026-11-28 09:12:45,0.59880,OK\n" +
	"REFUND,ORD1,RF1,RTX1,-10.00,EUR,2026-11-28 10:00:00,-0.06,PENDING\n"

func mappedBase() *Mapping {
	return &Mapping{
		Columns: MappedColumns{
			Kind: "type", OrderNo: "order", RefundNo: "refund", ChannelTxnID: "txn", Amount: "amount",
			Currency: "currency", OccurredAt: "time", Fee: "fee", Status: "status",
		},
		Kinds:      map[string][]string{"payment": {"SALE"}, "refund": {"REFUND"}, "batch": {"PAYOUT"}},
		Statuses:   map[string][]string{"success": {"OK"}, "processing": {"PENDING"}, "failed": {"FAILED"}},
		Sign:       "signed",
		TimeFormat: "2006-01-02 15:04:05",
		TimeZone:   "Europe/Berlin",
	}
}

// with returns mappedBase changed by edit.
func mappedWith(edit func(m *Mapping)) *Mapping {
	m := mappedBase()
	edit(m)
	return m
}

func parseMapped(ctx context.Context, m *Mapping, input string) ([]reconcile.Transaction, error) {
	p, err := Lookup("mapped")
	if err != nil {
		return nil, err
	}
	var rows []reconcile.Transaction
	err = p.Parse(ctx, strings.NewReader(input), Options{Name: "bill.csv", Location: shanghai, Mapping: m}, func(tx reconcile.Transaction) error {
		rows = append(rows, tx)
		return nil
	})
	return rows, err
}

// mappedBad is a badCase read with its own mapping.
type mappedBad struct {
	badCase
	mapping *Mapping
}

func runMappedBad(t *testing.T, tests []mappedBad) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := parseMapped(t.Context(), tt.mapping, tt.input)
			if err == nil {
				t.Fatalf("Parse succeeded with %d rows, want an error", len(rows))
			}
			var pe *reconcile.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %q (%T) is not a *reconcile.ParseError", err, err)
			}
			if pe.File != "bill.csv" || pe.Line != tt.line || pe.Column != tt.column {
				t.Errorf("got file %q line %d column %q, want bill.csv line %d column %q (%v)", pe.File, pe.Line, pe.Column, tt.line, tt.column, err)
			}
			where := "bill.csv: "
			if tt.line > 0 {
				where = fmt.Sprintf("bill.csv:%d: ", tt.line)
			}
			if tt.column != "" {
				where += "column " + tt.column + ": "
			}
			if msg := err.Error(); !strings.HasPrefix(msg, where) || !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q, want it to start with %q and contain %q", msg, where, tt.msg)
			}
		})
	}
}

func mappedBadCase(name, input string, line int, column, msg string) mappedBad {
	return mappedBad{badCase: badCase{name: name, input: input, line: line, column: column, msg: msg}, mapping: mappedBase()}
}

func mappedBadWith(m *Mapping, name, input string, line int, column, msg string) mappedBad {
	return mappedBad{badCase: badCase{name: name, input: input, line: line, column: column, msg: msg}, mapping: m}
}

func mappedGBK(t *testing.T, s string) string {
	t.Helper()
	b, err := simplifiedchinese.GBK.NewEncoder().String(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMappedErrors(t *testing.T) {
	edit := editor(t, mappedBaseInput)
	amount := func(s string) string { return edit(",99.80,", ","+s+",") }

	minor := mappedWith(func(m *Mapping) { m.AmountUnits = "minor" })
	minorInput := editor(t, edit(",99.80,", ",9980,"))
	minorAmount := func(s string) string { return minorInput(",9980,", ","+s+",") }
	unsigned := mappedWith(func(m *Mapping) { m.Sign = "" })

	preamble := mappedWith(func(m *Mapping) { m.SkipLines = 2 })
	pre := editor(t, "Report FAKEPSP\nAccount,1\n"+mappedBaseInput)

	gbkMapping := mappedWith(func(m *Mapping) {
		m.Encoding = "gbk"
		m.Columns.Kind = "类型"
	})
	gbkInput := editor(t, mappedGBK(t, strings.Replace(mappedBaseInput, "type,", "类型,", 1)))

	unix := mappedWith(func(m *Mapping) { m.TimeFormat = "unix" })
	unixInput := editor(t, strings.ReplaceAll(strings.ReplaceAll(mappedBaseInput, "2026-11-28 09:12:45", "1795853565"), "2026-11-28 10:00:00", "1795856400"))

	// The payment made a chargeback, the refund a chargeback reversal.
	disputes := mappedWith(func(m *Mapping) {
		m.Kinds["chargeback"] = []string{"CB"}
		m.Kinds["chargeback_reversal"] = []string{"CB_REVERSED"}
	})
	chargeback := func(s string) string { return edit("SALE,ORD1,,TX1,99.80,", "CB,ORD1,,TX1,"+s+",") }
	reversal := func(s string) string { return edit("REFUND,ORD1,RF1,RTX1,-10.00,", "CB_REVERSED,ORD1,,RTX1,"+s+",") }

	multiline := editor(t, "type,order,refund,txn,amount,currency,time,fee,status,note\n"+
		"SALE,ORD1,,TX1,99.80,EUR,2026-11-28 09:12:45,,OK,\"two\nlines\"\n"+
		"SALE,ORD2,,TX2,1.00,EUR,2026-11-28 09:12:45,,OK,\n")

	runMappedBad(t, []mappedBad{
		{badCase{name: "nil mapping", input: mappedBaseInput, msg: `needs a "mapping" object in the channel's config`}, nil},
		mappedBadWith(&Mapping{}, "invalid mapping", mappedBaseInput, 0, "", "mapping: columns.kind is required"),

		mappedBadCase("missing mapped column", edit(",amount,", ",amt,"), 1, "amount", `missing column, mapped as columns.amount (header: "type,order,refund,txn,amt,`),
		mappedBadCase("missing optional mapped column", edit(",fee,", ",fees,"), 1, "fee", "missing column, mapped as columns.fee"),
		mappedBadCase("duplicated column", edit(",fee,", ",amount,"), 1, "amount", "duplicate column (fields 5 and 8), mapped as columns.amount"),
		mappedBadCase("duplicated column other case", edit(",fee,", ",AMOUNT,"), 1, "AMOUNT", "duplicate column"),
		mappedBadCase("ragged row", edit("0.59880,OK", "0.59880"), 2, "", "row has 8 fields, header has 9"),
		mappedBadCase("long row", edit("0.59880,OK", "0.59880,OK,extra"), 2, "", "row has 10 fields, header has 9"),
		mappedBadCase("bare quote", edit("ORD1,,TX1", `OR"D1,,TX1`), 2, "", `bare "`),
		mappedBadCase("unterminated quote", edit("-10.00,EUR", `"-10.00,EUR`), 3, "", `extraneous or missing "`),
		mappedBadCase("invalid UTF-8", edit("RTX1", "RTX\xff"), 3, "txn", "invalid UTF-8"),
		mappedBadCase("invalid UTF-8 in header", edit("status\n", "st\xffatus\n"), 1, "", "header field 9: invalid UTF-8"),
		mappedBadCase("replacement character", edit("RTX1", "RTX\uFFFD"), 3, "txn", "replacement character U+FFFD"),

		mappedBadCase("thousands separator", amount(`"1,000.00"`), 2, "amount", `"1,000.00": not a plain decimal`),
		mappedBadCase("too many decimals", amount("12.345"), 2, "amount", `"12.345": more decimals than the currency has`),
		mappedBadCase("exponent", amount("1e3"), 2, "amount", `"1e3": not a plain decimal`),
		mappedBadCase("bare minus", amount("-"), 2, "amount", `"-": not a plain decimal`),
		mappedBadCase("empty amount", amount(""), 2, "amount", "empty amount"),
		mappedBadCase("blank amount", amount("  "), 2, "amount", "empty amount"),
		mappedBadCase("decimal comma", amount("99,80"), 2, "", "row has 10 fields"),
		mappedBadCase("overflow", amount("99999999999999999999.00"), 2, "amount", "out of range"),
		mappedBadCase("negative payment", amount("-99.80"), 2, "amount", `"-99.80": negative amount on a payment row`),
		mappedBadCase("positive refund", edit("-10.00", "10.00"), 3, "amount", `"10.00": positive amount on a refund row`),
		mappedBadCase("plus on a refund", edit("-10.00", "+10.00"), 3, "amount", "positive amount on a refund row"),
		mappedBadWith(disputes, "positive chargeback", chargeback("99.80"), 2, "amount", `"99.80": positive amount on a chargeback row (sign "signed": payments and reversals positive, refunds and chargebacks negative)`),
		mappedBadWith(disputes, "negative chargeback reversal", reversal("-10.00"), 3, "amount", `"-10.00": negative amount on a chargeback_reversal row`),
		mappedBadWith(disputes, "unparseable chargeback amount", chargeback("-99.8O"), 2, "amount", `"-99.8O": not a plain decimal`),
		mappedBadWith(unsigned, "sign when unsigned", amount("-99.80"), 2, "amount", `"-99.80": amount must be unsigned`),
		mappedBadWith(unsigned, "plus when unsigned", amount("+99.80"), 2, "amount", "amount must be unsigned"),
		mappedBadWith(minor, "fraction in minor units", minorAmount("12.5"), 2, "amount", `"12.5": want whole minor units`),
		mappedBadWith(minor, "decimals in minor units", minorAmount("12.00"), 2, "amount", "want whole minor units"),
		mappedBadWith(minor, "exponent in minor units", minorAmount("1e3"), 2, "amount", `"1e3": not a plain decimal`),
		mappedBadWith(minor, "bare minus in minor units", minorAmount("-"), 2, "amount", "not a plain decimal"),
		mappedBadWith(minor, "overflow in minor units", minorAmount("9223372036854775808"), 2, "amount", "out of range"),
		mappedBadWith(minor, "most negative int64", minorAmount("-9223372036854775808"), 2, "amount", "out of range"),
		mappedBadWith(minor, "fee overflow in minor units", minorInput(",0.59880,", ",9223372036854776,"), 2, "fee", "out of range"),
		mappedBadWith(minor, "fee fraction in minor units", minorInput(",0.59880,", ",0.5,"), 2, "fee", "want whole minor units"),
		mappedBadCase("bad fee", edit("0.59880", "0.598801"), 2, "fee", "more decimals"),

		mappedBadCase("unknown currency", edit("99.80,EUR", "99.80,XXX"), 2, "currency", `unknown currency "XXX"`),
		mappedBadCase("lower-case currency", edit("99.80,EUR", "99.80,eur"), 2, "currency", `unknown currency "eur"`),
		mappedBadCase("empty currency", edit("99.80,EUR", "99.80,"), 2, "currency", `unknown currency ""`),
		mappedBadCase("unparseable time", edit("2026-11-28 09:12:45", "28/11/2026 09:12"), 2, "time", `"28/11/2026 09:12": want the mapping's time_format "2006-01-02 15:04:05"`),
		mappedBadCase("empty time", edit("2026-11-28 09:12:45", ""), 2, "time", `"": want the mapping's time_format`),
		mappedBadWith(unix, "fractional unix time", unixInput("1795853565", "1795853565.5"), 2, "time", `want whole seconds since 1970`),
		mappedBadWith(unix, "negative unix time", unixInput("1795853565", "-1"), 2, "time", `want whole seconds`),
		mappedBadWith(unix, "unix time past 9999", unixInput("1795853565", "253402300800"), 2, "time", "out of range for unix"),
		mappedBadCase("year 0", editor(t, mappedBaseInput)("2026-11-28 09:12:45", "0000-01-01 00:00:00"), 2, "time", `"0000-01-01 00:00:00": outside the years 1970 to 9999`),
		mappedBadCase("before 1970", editor(t, mappedBaseInput)("2026-11-28 09:12:45", "1969-12-31 23:59:59"), 2, "time", "outside the years 1970 to 9999"),
		mappedBadWith(mappedWith(func(m *Mapping) { m.TimeFormat = "" }), "not RFC 3339", mappedBaseInput, 2, "time", "want RFC 3339"),

		mappedBadCase("unlisted status", edit(",PENDING", ",DONE"), 3, "status", `unknown status "DONE" (the mapping's statuses list "FAILED", "PENDING", "OK")`),
		mappedBadCase("empty status", edit(",PENDING", ","), 3, "status", `unknown status ""`),
		mappedBadCase("payment without order number", edit("SALE,ORD1,", "SALE,,"), 2, "order", "empty order number on a payment row"),
		mappedBadCase("refund without refund number or channel id", edit(",RF1,RTX1,", ",,,"), 3, "txn", "empty channel transaction id on a refund row"),
		mappedBadCase("payment without channel id", edit(",TX1,", ",,"), 2, "txn", "empty channel transaction id on a payment row"),
		mappedBadCase("empty kind", edit("REFUND,ORD1", ",ORD1"), 3, "type", "empty kind"),

		mappedBadWith(gbkMapping, "invalid GBK", gbkInput("RTX1", "RTX\xff"), 3, "txn", "bytes that are not valid GBK (decoded as U+FFFD)"),
		mappedBadWith(gbkMapping, "GBK lead byte without trail", gbkInput("RTX1", "RTX\x81"), 3, "txn", "not valid GBK"),
		mappedBadWith(gbkMapping, "invalid GBK in header", gbkInput("status\n", "st\xffatus\n"), 1, "", "header field 9: bytes that are not valid GBK"),
		mappedBadWith(gbkMapping, "UTF-8 file read as GBK", "\xef\xbb\xbf"+mappedBaseInput, 1, "", `UTF-8 byte order mark but the mapping says encoding "GBK"`),

		mappedBadWith(preamble, "line numbers count the preamble", pre("-10.00", "10.00"), 5, "amount", "positive amount on a refund row"),
		mappedBadWith(preamble, "ragged row after a preamble", pre("0.59880,OK", "0.59880"), 4, "", "row has 8 fields, header has 9"),
		mappedBadWith(preamble, "quote error after a preamble", pre("ORD1,,TX1", `OR"D1,,TX1`), 4, "", `bare "`),
		mappedBadWith(preamble, "missing column after a preamble", pre(",amount,", ",amt,"), 3, "amount", "missing column"),
		mappedBadWith(preamble, "file shorter than the preamble", "Report FAKEPSP\n", 0, "", "empty file: it ends after line 1, within the 2 lines skip_lines skips"),
		mappedBadWith(preamble, "nothing after the preamble", "Report FAKEPSP\nAccount,1\n\n", 0, "", "no header row after the 2 skipped lines"),
		mappedBadCase("line numbers count quoted line breaks", multiline("1.00", "-1.00"), 4, "amount", "negative amount on a payment row"),

		mappedBadCase("empty file", "", 0, "", "empty file"),
		mappedBadCase("only a BOM", "\xef\xbb\xbf", 0, "", "empty file"),
		mappedBadCase("only blank lines", "\n\n", 0, "", "empty file: no header row"),
		mappedBadWith(gbkMapping, "empty GBK file", "", 0, "", "empty file"),
	})
}

// TestMappedChargebackErrors holds the chargebacks case, a signed
// mapping of a dispute's events, to its errors.
func TestMappedChargebackErrors(t *testing.T) {
	dir := filepath.Join("testdata", "mapped", "chargebacks")
	edit := editor(t, readTestdata(t, "mapped", "chargebacks", "input.csv"))
	runBadWith(t, "mapped", loadCaseOptions(t, dir), []badCase{
		{"reversal larger than its chargeback", edit("CASE-8001,10.4,40.00,", "CASE-8001,10.4,60.01,"), 4, "Amount",
			`chargeback reversal of 60.01 is more than the 60.00 the chargebacks of dispute "CASE-8001" took before it in the file`, false},
		{"negative refund reversal", edit("REFUND_REVERSED,ORD8003,RF8003,RRV-8003,CAP-8003,,,20.00", "REFUND_REVERSED,ORD8003,RF8003,RRV-8003,CAP-8003,,,-20.00"), 8, "Amount",
			`"-20.00": negative amount on a refund_reversal row`, false},
		{"positive second chargeback", edit("-40.00", "40.00"), 5, "Amount", `"40.00": positive amount on a second_chargeback row`, false},
	})
}

func TestMappedRows(t *testing.T) {
	tests := []struct {
		name  string
		m     *Mapping
		input string
		want  []reconcile.Transaction
	}{
		{
			name:  "base",
			input: mappedBaseInput,
			want: []reconcile.Transaction{
				{Kind: reconcile.KindPayment, OrderNo: "ORD1", ChannelTxnID: "TX1", Amount: 9980, Currency: "EUR", FeeMilli: 59880, Status: reconcile.StatusSuccess, RawKind: "SALE", Line: 2,
					OccurredAt: time.Date(2026, 11, 28, 8, 12, 45, 0, time.UTC)},
				{Kind: reconcile.KindRefund, OrderNo: "ORD1", RefundNo: "RF1", ChannelTxnID: "RTX1", Amount: 1000, Currency: "EUR", FeeMilli: -6000, Status: reconcile.StatusProcessing, RawKind: "REFUND", Line: 3,
					OccurredAt: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)},
			},
		},
		{
			name: "trim, case-insensitive names and values, refund number dropped from a payment",
			m: mappedWith(func(m *Mapping) {
				m.Trim = "`"
				m.Columns.RefundNo = "order"
				m.Columns.Fee = ""
				m.Columns.Status = ""
				m.Statuses = nil
			}),
			input: "`TYPE`,`Order`,`TXN`,` amount `,`currency`,`time`\n" +
				"`sale`,`ORD1`,`TX1`,` 5.00 `,`EUR`,`2026-07-01 12:00:00`\n" +
				"` Refund `,`RF1`,`TX2`,`-5.00`,`EUR`,`2026-07-01 13:00:00`\n",
			want: []reconcile.Transaction{
				{Kind: reconcile.KindPayment, OrderNo: "ORD1", ChannelTxnID: "TX1", Amount: 500, Currency: "EUR", Status: reconcile.StatusSuccess, RawKind: "sale", Line: 2,
					OccurredAt: time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)},
				{Kind: reconcile.KindRefund, OrderNo: "RF1", RefundNo: "RF1", ChannelTxnID: "TX2", Amount: 500, Currency: "EUR", Status: reconcile.StatusSuccess, RawKind: "Refund", Line: 3,
					OccurredAt: time.Date(2026, 7, 1, 11, 0, 0, 0, time.UTC)},
			},
		},
		{
			name: "tab delimiter, unix_ms, minor units, fee deducted",
			m: mappedWith(func(m *Mapping) {
				m.Delimiter = "tab"
				m.TimeFormat = "unix_ms"
				m.AmountUnits = "minor"
				m.FeeSign = "negative"
				m.Sign = "any"
			}),
			input: "type\torder\trefund\ttxn\tamount\tcurrency\ttime\tfee\tstatus\n" +
				"SALE\tORD1\t\tTX1\t-1250\tKWD\t1795853565123\t-7\tFAILED\n" +
				"PAYOUT\t\t\t\t-1243\tKWD\t1795853565124\t\tOK\n",
			want: []reconcile.Transaction{
				{Kind: reconcile.KindPayment, OrderNo: "ORD1", ChannelTxnID: "TX1", Amount: 1250, Currency: "KWD", FeeMilli: 7000, Status: reconcile.StatusFailed, RawKind: "SALE", Line: 2,
					OccurredAt: time.UnixMilli(1795853565123)},
				{Kind: reconcile.KindBatch, Amount: 1243, Currency: "KWD", Status: reconcile.StatusSuccess, RawKind: "PAYOUT", Line: 3,
					OccurredAt: time.UnixMilli(1795853565124)},
			},
		},
		{
			name: "RFC 3339 with and without an offset, GB18030",
			m: mappedWith(func(m *Mapping) {
				m.TimeFormat = "rfc3339"
				m.TimeZone = ""
				m.Encoding = "gb18030"
				m.Kinds = map[string][]string{"payment": {"支付"}}
			}),
			input: "\x84\x31\x95\x33" + mappedGBK(t, "type,order,refund,txn,amount,currency,time,fee,status\n"+
				"支付,ORD1,,TX1,1,JPY,2026-11-28T09:12:45Z,,OK\n"+
				"支付,ORD2,,TX2,2,JPY,2026-11-28T09:12:45,,OK\n"),
			want: []reconcile.Transaction{
				{Kind: reconcile.KindPayment, OrderNo: "ORD1", ChannelTxnID: "TX1", Amount: 1, Currency: "JPY", Status: reconcile.StatusSuccess, RawKind: "支付", Line: 2,
					OccurredAt: time.Date(2026, 11, 28, 9, 12, 45, 0, time.UTC)},
				{Kind: reconcile.KindPayment, OrderNo: "ORD2", ChannelTxnID: "TX2", Amount: 2, Currency: "JPY", Status: reconcile.StatusSuccess, RawKind: "支付", Line: 3,
					OccurredAt: time.Date(2026, 11, 28, 1, 12, 45, 0, time.UTC)},
			},
		},
		{
			name: "a dispute's events and a refund reversal, any sign",
			m: mappedWith(func(m *Mapping) {
				m.Sign = "any"
				m.Columns.DisputeID, m.Columns.PaymentID, m.Columns.Reason = "case", "payment", "why"
				m.Kinds = map[string][]string{"payment": {"SALE"}, "refund": {"REFUND"}, "chargeback": {"CB"}, "second_chargeback": {"CB2"},
					"chargeback_reversal": {"CB_REVERSED"}, "refund_reversal": {"REFUND_REVERSED"}}
			}),
			input: "type,order,refund,txn,amount,currency,time,fee,status,case,payment,why\n" +
				"CB,ORD1,RF0,CB1,-5.00,EUR,2026-11-28 09:00:00,,OK,D1,TX1,fraud\n" +
				"cb_reversed,,,CB2,-5.00,EUR,2026-11-28 10:00:00,,OK,,TX1,\n" +
				"CB2,ORD1,,CB3,5.00,EUR,2026-11-28 11:00:00,,OK,D1,TX1,fraud\n" +
				"REFUND_REVERSED,ORD1,RF1,RR1,-2.00,EUR,2026-11-28 12:00:00,,OK,D9,TX1,why\n",
			want: []reconcile.Transaction{
				{Kind: reconcile.KindChargeback, OrderNo: "ORD1", ChannelTxnID: "CB1", Amount: 500, Currency: "EUR", Status: reconcile.StatusSuccess, RawKind: "CB", Line: 2,
					OccurredAt: time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC), DisputeID: "D1", PaymentID: "TX1", Reason: "fraud"},
				{Kind: reconcile.KindChargebackReversal, ChannelTxnID: "CB2", Amount: 500, Currency: "EUR", Status: reconcile.StatusSuccess, RawKind: "cb_reversed", Line: 3,
					OccurredAt: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC), DisputeID: "CB2", PaymentID: "TX1"},
				{Kind: reconcile.KindSecondChargeback, OrderNo: "ORD1", ChannelTxnID: "CB3", Amount: 500, Currency: "EUR", Status: reconcile.StatusSuccess, RawKind: "CB2", Line: 4,
					OccurredAt: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), DisputeID: "D1", PaymentID: "TX1", Reason: "fraud"},
				{Kind: reconcile.KindRefundReversal, OrderNo: "ORD1", RefundNo: "RF1", ChannelTxnID: "RR1", Amount: 200, Currency: "EUR", Status: reconcile.StatusSuccess, RawKind: "REFUND_REVERSED", Line: 5,
					OccurredAt: time.Date(2026, 11, 28, 11, 0, 0, 0, time.UTC), PaymentID: "TX1"},
			},
		},
		{
			name:  "header only",
			input: "type,order,refund,txn,amount,currency,time,fee,status\r\n",
			want:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.m
			if m == nil {
				m = mappedBase()
			}
			got, err := parseMapped(t.Context(), m, tt.input)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d rows, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if !g.OccurredAt.Equal(w.OccurredAt) {
					t.Errorf("row %d OccurredAt = %v, want %v", i, g.OccurredAt, w.OccurredAt)
				}
				g.OccurredAt, w.OccurredAt = time.Time{}, time.Time{}
				if g != w {
					t.Errorf("row %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestMappedGoldenFacts pins what the mapped golden files must say, so a
// wrong want.json cannot be refreshed into place unnoticed.
func TestMappedGoldenFacts(t *testing.T) {
	rows := func(c string) map[int]reconcile.Transaction {
		t.Helper()
		dir := filepath.Join("testdata", "mapped", c)
		byLine := map[int]reconcile.Transaction{}
		_, err := ParseFile(t.Context(), filepath.Join(dir, "input.csv"), "mapped", loadCaseOptions(t, dir), func(tx reconcile.Transaction) error {
			byLine[tx.Line] = tx
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return byLine
	}
	berlin := time.FixedZone("CET", 3600)

	eu := rows("semicolon_minor_units")
	if r := eu[3]; r.Kind != reconcile.KindPayment || r.Amount != 12000 || r.FeeMilli != 62000 || !r.OccurredAt.Equal(time.Date(2026, 11, 28, 10, 2, 0, 0, berlin)) {
		t.Errorf("line 3 = %+v, want payment 12000 (+12000 cents), FeeMilli 62000, 10:02 CET", r)
	}
	if r := eu[4]; r.Kind != reconcile.KindRefund || r.Amount != 1990 || r.RefundNo != "RF202611280401" || r.FeeMilli != -10000 {
		t.Errorf("line 4 = %+v, want refund RF202611280401 of 1990, FeeMilli -10000", r)
	}
	if r := eu[8]; r.Kind != reconcile.KindChargeback || r.RawKind != "CHARGEBACK" || r.Amount != 12000 || r.DisputeID != "PSP-FAKE-0007" || r.OrderNo != "ORD202611280402" {
		t.Errorf("line 8 = %+v, want chargeback of ORD202611280402, 12000 (-12000 cents), dispute PSP-FAKE-0007 (its PSP Reference)", r)
	}
	if r := eu[10]; r.Kind != reconcile.KindBatch || r.Amount != 2913 {
		t.Errorf("line 10 = %+v, want batch 2913", r)
	}

	cn := rows("gbk")
	if r := cn[2]; r.Kind != reconcile.KindPayment || r.OrderNo != "ORD202611280101" || r.Amount != 3990 || r.Currency != "CNY" || r.FeeMilli != 24000 ||
		!r.OccurredAt.Equal(time.Date(2026, 11, 28, 8, 15, 9, 0, shanghai)) {
		t.Errorf("line 2 = %+v, want payment ORD202611280101 3990 CNY, FeeMilli 24000 (fee -0.24 deducted), 08:15:09 +08:00", r)
	}
	if r := cn[5]; r.RefundNo != "RF202611280102" || r.Amount != 2800 {
		t.Errorf("line 5 = %+v, want refund RF202611280102 of 2800", r)
	}
	if r := cn[6]; r.Kind != reconcile.KindOther || r.RawKind != "冻结" {
		t.Errorf("line 6 = %+v, want other 冻结", r)
	}

	ux := rows("unix_times")
	if r := ux[2]; r.ChannelTxnID != "txn_FAKE0001" || r.Amount != 4990 || !r.OccurredAt.Equal(time.Unix(1795827165, 0)) {
		t.Errorf("line 2 = %+v, want txn_FAKE0001 4990 at unix 1795827165", r)
	}
	if r := ux[7]; r.Kind != reconcile.KindBatch || r.Amount != 16178 {
		t.Errorf("line 7 = %+v, want batch payout 16178", r)
	}

	pre := rows("preamble")
	if len(pre) != 6 || pre[5].Amount != 1200 || pre[6].Amount != 12345 || pre[6].Currency != "KWD" {
		t.Errorf("preamble rows = %+v, want 6 from line 5, JPY 1200 and KWD 12345", pre)
	}
	if pre[7].Status != reconcile.StatusProcessing || pre[8].Status != reconcile.StatusFailed || pre[10].Status != reconcile.StatusSuccess {
		t.Errorf("statuses = %s %s %s, want processing failed success", pre[7].Status, pre[8].Status, pre[10].Status)
	}

	cb := rows("chargebacks")
	if r := cb[3]; r.Kind != reconcile.KindChargeback || r.Amount != 6000 || r.DisputeID != "CASE-8001" || r.PaymentID != "CAP-8001" || r.Reason != "10.4" || r.FeeMilli != 1200000 {
		t.Errorf("line 3 = %+v, want chargeback 6000 (-60.00) of case CASE-8001, payment CAP-8001, reason 10.4, FeeMilli 1200000", r)
	}
	if r := cb[4]; r.Kind != reconcile.KindChargebackReversal || r.Amount != 4000 || r.DisputeID != "CASE-8001" {
		t.Errorf("line 4 = %+v, want chargeback_reversal 4000 of CASE-8001", r)
	}
	if r := cb[6]; r.Kind != reconcile.KindChargeback || r.OrderNo != "" || r.DisputeID != "CHB-8002" || r.Amount != 1550 {
		t.Errorf("line 6 = %+v, want chargeback 1550 without an order, its dispute its Reference CHB-8002", r)
	}
	if r := cb[8]; r.Kind != reconcile.KindRefundReversal || r.RefundNo != "RF8003" || r.PaymentID != "CAP-8003" || r.DisputeID != "" {
		t.Errorf("line 8 = %+v, want refund_reversal of RF8003, payment CAP-8003, no dispute", r)
	}
	if r := cb[9]; r.Kind != reconcile.KindOther || r.DisputeID != "" {
		t.Errorf("line 9 = %+v, want other (an unlisted RETRIEVAL_REQUEST), no dispute", r)
	}

	fr := rows("latin1")
	if r := fr[4]; r.Kind != reconcile.KindRefund || r.RefundNo != "RMB202611280601" || r.Amount != 550 || r.ChannelTxnID != "TRX-FAKE-0003" {
		t.Errorf("line 4 = %+v, want refund RMB202611280601 of 550 with id TRX-FAKE-0003 (N° column)", r)
	}
}

func TestMappedStops(t *testing.T) {
	t.Run("emit error", func(t *testing.T) {
		stop := errors.New("stop")
		p, _ := Lookup("mapped")
		calls := 0
		err := p.Parse(t.Context(), strings.NewReader(mappedBaseInput), Options{Mapping: mappedBase()}, func(reconcile.Transaction) error {
			calls++
			return stop
		})
		if err != stop || calls != 1 {
			t.Errorf("err = %v after %d calls, want emit's error as is after 1", err, calls)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := parseMapped(ctx, mappedBase(), mappedBaseInput); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("cancelled midway", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("type,order,refund,txn,amount,currency,time,fee,status\n")
		for range 3 * ctxEvery {
			b.WriteString("SALE,ORD1,,TX1,1.00,EUR,2026-11-28 09:12:45,,OK\n")
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		p, _ := Lookup("mapped")
		n := 0
		err := p.Parse(ctx, strings.NewReader(b.String()), Options{Mapping: mappedBase()}, func(reconcile.Transaction) error {
			n++
			if n == 10 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) || n > ctxEvery {
			t.Errorf("err = %v after %d rows, want context.Canceled within %d rows", err, n, ctxEvery)
		}
	})
}

func TestMappingValidate(t *testing.T) {
	if err := mappedBase().Validate(); err != nil {
		t.Fatalf("base mapping: %v", err)
	}
	tests := []struct {
		name string
		edit func(m *Mapping)
		want string
	}{
		{"unknown encoding", func(m *Mapping) { m.Encoding = "shift_jis" }, `encoding "shift_jis"`},
		{"delimiter of two characters", func(m *Mapping) { m.Delimiter = ";;" }, `delimiter ";;"`},
		{"quote as delimiter", func(m *Mapping) { m.Delimiter = `"` }, `delimiter "\""`},
		{"newline as delimiter", func(m *Mapping) { m.Delimiter = "\n" }, `delimiter "\n"`},
		{"letter as delimiter", func(m *Mapping) { m.Delimiter = "x" }, `delimiter "x"`},
		{"unknown units", func(m *Mapping) { m.AmountUnits = "cents" }, `amount_units "cents"`},
		{"unknown sign", func(m *Mapping) { m.Sign = "negative" }, `sign "negative"`},
		{"unknown fee sign", func(m *Mapping) { m.FeeSign = "signed" }, `fee_sign "signed"`},
		{"YYYY layout", func(m *Mapping) { m.TimeFormat = "YYYY-MM-DD HH:mm" }, `time_format "YYYY-MM-DD HH:mm": want "rfc3339"`},
		{"layout without a day", func(m *Mapping) { m.TimeFormat = "15:04:05" }, `time_format "15:04:05"`},
		{"layout with a zone abbreviation", func(m *Mapping) { m.TimeFormat = "2006-01-02 15:04 MST" }, "zone abbreviations are ambiguous"},
		{"unknown kind name", func(m *Mapping) { m.Kinds["dispute"] = []string{"CB"} }, `kinds: unknown kind "dispute" (want payment, refund, batch, chargeback, chargeback_reversal, second_chargeback, refund_reversal or payout;`},
		{"kind other", func(m *Mapping) { m.Kinds["other"] = []string{"ADJ"} }, `kinds: unknown kind "other"`},
		{"value under two kinds", func(m *Mapping) { m.Kinds["batch"] = []string{" sale "} }, `kinds: "SALE" is listed under both batch and payment`},
		{"no payment or refund kinds", func(m *Mapping) { m.Kinds = map[string][]string{"batch": {"PAYOUT"}} }, "kinds: list the values of columns.kind that mean payment and refund"},
		{"refunds without refund_no", func(m *Mapping) { m.Columns.RefundNo = "" }, "columns.refund_no is required when kinds lists refunds"},
		{"unknown status name", func(m *Mapping) { m.Statuses["closed"] = []string{"CLOSED"} }, `statuses: unknown status "closed"`},
		{"value under two statuses", func(m *Mapping) { m.Statuses["failed"] = []string{"ok"} }, `statuses: "OK" is listed under both failed and success`},
		{"status column without statuses", func(m *Mapping) { m.Statuses = nil }, "columns.status is set but statuses is empty"},
		{"statuses without a status column", func(m *Mapping) { m.Columns.Status = "" }, "statuses is set but columns.status is not"},
		{"missing kind column", func(m *Mapping) { m.Columns.Kind = "" }, "columns.kind is required"},
		{"missing order_no column", func(m *Mapping) { m.Columns.OrderNo = "" }, "columns.order_no is required"},
		{"missing channel_txn_id column", func(m *Mapping) { m.Columns.ChannelTxnID = "" }, "columns.channel_txn_id is required"},
		{"missing amount column", func(m *Mapping) { m.Columns.Amount = "" }, "columns.amount is required"},
		{"missing occurred_at column", func(m *Mapping) { m.Columns.OccurredAt = "" }, "columns.occurred_at is required"},
		{"blank column name", func(m *Mapping) { m.Columns.Fee = "  " }, "columns.fee is blank"},
		{"no currency", func(m *Mapping) { m.Columns.Currency = "" }, "set columns.currency, or currency"},
		{"currency twice", func(m *Mapping) { m.Currency = "EUR" }, "set columns.currency or currency, not both"},
		{"unknown fixed currency", func(m *Mapping) { m.Columns.Currency, m.Currency = "", "EURO" }, `currency "EURO" is not a known ISO 4217 code`},
		{"bad time_zone", func(m *Mapping) { m.TimeZone = "Mars/Olympus" }, `time_zone "Mars/Olympus"`},
		{"Local time_zone", func(m *Mapping) { m.TimeZone = "Local" }, `time_zone "Local"`},
		{"negative skip_lines", func(m *Mapping) { m.SkipLines = -1 }, "skip_lines -1"},
		{"payout kind without a payout column", func(m *Mapping) { m.Kinds["payout"] = []string{"AUSZAHLUNG"} }, "columns.payout is required when kinds lists payout"},
		{"payout date without a payout column", func(m *Mapping) { m.Columns.PayoutDate = "paid" }, "columns.payout_date is set but columns.payout is not"},
		{"payout date format without its column", func(m *Mapping) { m.PayoutDateFormat = "02.01.2006" }, "payout_date_format is set but columns.payout_date is not"},
		{"YYYY payout date format", func(m *Mapping) {
			m.Columns.Payout, m.Columns.PayoutDate, m.PayoutDateFormat = "payout", "paid", "DD.MM.YYYY"
		}, `payout_date_format "DD.MM.YYYY": want "rfc3339"`},
		{"every problem at once", func(m *Mapping) { m.Encoding, m.Sign = "ebcdic", "maybe" }, `sign "maybe": want "unsigned", "signed" or "any"; encoding "ebcdic"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mappedWith(tt.edit).Validate()
			if err == nil {
				t.Fatal("Validate succeeded, want an error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "mapping: ") || !strings.Contains(msg, tt.want) {
				t.Errorf("Validate() = %q, want it to start with \"mapping: \" and contain %q", msg, tt.want)
			}
		})
	}

	t.Run("nil", func(t *testing.T) {
		var m *Mapping
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), `needs a "mapping"`) {
			t.Errorf("Validate() = %v, want the missing-mapping error", err)
		}
	})
}

func TestMappingJSON(t *testing.T) {
	const doc = `{
		"columns": {"kind": "Typ", "order_no": "Ref", "refund_no": "RefundRef", "channel_txn_id": "PSP", "amount": "Betrag", "occurred_at": "Datum"},
		"currency": "EUR",
		"kinds": {"payment": ["SALE"], "refund": ["REFUND"]},
		"amount_units": "minor", "sign": "signed", "fee_sign": "negative",
		"time_format": "02.01.2006 15:04", "time_zone": "Europe/Berlin",
		"encoding": "windows-1252", "delimiter": ";", "skip_lines": 2, "trim": "'"
	}`
	var m Mapping
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.Columns.ChannelTxnID != "PSP" || m.AmountUnits != "minor" || m.SkipLines != 2 || m.Delimiter != ";" || m.Kinds["refund"][0] != "REFUND" {
		t.Errorf("decoded %+v", m)
	}

	for _, typo := range []string{`{"amount_unit": "minor"}`, `{"columns": {"ammount": "x"}}`} {
		var m Mapping
		err := json.Unmarshal([]byte(typo), &m)
		if err == nil || !strings.Contains(err.Error(), "unknown field") {
			t.Errorf("Unmarshal(%s) = %v, want an unknown field error", typo, err)
		}
	}
}
