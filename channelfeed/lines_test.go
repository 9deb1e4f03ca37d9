package channelfeed

import (
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"reconcile"
)

// sampleCase is a format's sample file and one field of one of its rows,
// for the tests that damage every format's file in the same way.
type sampleCase struct {
	format, dir string
	field       string // occurs once in the file, on line
	line        int
	column      string // header name of field's column
	header      string // a header name, occurring once in the file, on headerLine
	headerLine  int
	csv         bool // read as CSV: a quoted field may hold a CR or line breaks
}

var sampleCases = []sampleCase{
	{"csv", "basic", ",TXN-1001,", 2, "channel_txn_id", "channel_txn_id", 1, true},
	{"mapped", "semicolon_minor_units", "PSP-FAKE-0001", 2, "PSP Reference", "PSP Reference", 1, true},
	{"stripe", "sample", "txn_3FAKEbaltxn0000000001", 2, "balance_transaction_id", "balance_transaction_id", 1, true},
	{"adyen", "sample", ",ORD202611280301,", 2, "Merchant Reference", "Batch Number", 1, true},
	{"wechatpay", "sample", "`ORD202611280001,", 2, "商户订单号", "商户订单号", 1, false},
	{"alipay", "sample", "ORD202611280101\t", 6, "商户订单号", "商户订单号", 5, false},
}

// text is the sample as text, decoded from GBK for Alipay.
func (c sampleCase) text(t *testing.T) string {
	s := readTestdata(t, c.format, c.dir, "input.csv")
	if c.format == "alipay" {
		s = aliFromGBK(t, s)
	}
	return s
}

// file turns text back into the sample's bytes.
func (c sampleCase) file(t *testing.T, text string) string {
	if c.format == "alipay" {
		return aliToGBK(t, text)
	}
	return text
}

func (c sampleCase) options(t *testing.T) Options {
	return loadCaseOptions(t, filepath.Join("testdata", c.format, c.dir))
}

// withValue is the sample with the value of its field replaced by
// edit(value).
func (c sampleCase) withValue(t *testing.T, edit func(value string) string) string {
	t.Helper()
	value := strings.Trim(c.field, ",`\t")
	return c.file(t, editor(t, c.text(t))(c.field, strings.Replace(c.field, value, edit(value), 1)))
}

// upToField is withValue cut after the field's line.
func (c sampleCase) upToField(t *testing.T, edit func(value string) string) string {
	t.Helper()
	lines := strings.SplitAfter(c.withValue(t, edit), "\n")
	return strings.Join(lines[:c.line], "")
}

// inField puts s into the middle of the sample's field: "ORD1" → "OR" + s + "D1".
func (c sampleCase) inField(t *testing.T, s string) string {
	t.Helper()
	return c.withValue(t, func(v string) string { return insert(v, s) })
}

// insert puts s into the middle of v, between two runes.
func insert(v, s string) string {
	at := len(v) / 2
	for at > 0 && !utf8.RuneStart(v[at]) {
		at--
	}
	return v[:at] + s + v[at:]
}

// crOnly gives every line of s the old Mac line ending, a CR alone.
func crOnly(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\r"), "\n", "\r")
}

const crMessage = "line ends in a CR without LF (byte "

// TestBareCR: encoding/csv and bufio.ScanLines end lines at LF only, so a
// file with old Mac line endings read as its header and no rows (exit 0),
// or failed with a message about something else. A CR is the end of a
// line only with an LF after it, or at the end of the file.
func TestBareCR(t *testing.T) {
	for _, c := range sampleCases {
		t.Run(c.format, func(t *testing.T) {
			raw := readTestdata(t, c.format, c.dir, "input.csv")
			runBadWith(t, c.format, c.options(t), []badCase{
				{name: "CR line endings", input: crOnly(raw), line: 1, msg: crMessage},
				{name: "CR in a field", input: c.inField(t, "\r"), line: c.line, msg: crMessage},
				{name: "CR before CRLF", input: c.file(t, editor(t, c.text(t))(c.field, c.field+"\r")), line: c.line, msg: crMessage},
			})
		})
	}

	t.Run("mapped/skip_lines", func(t *testing.T) {
		dir := filepath.Join("testdata", "mapped", "preamble")
		raw := readTestdata(t, "mapped", "preamble", "input.csv")
		lines := strings.SplitAfter(raw, "\n")
		runBadWith(t, "mapped", loadCaseOptions(t, dir), []badCase{
			{name: "CR line endings", input: crOnly(raw), line: 1, msg: crMessage},
			{name: "CR in a skipped line", input: strings.Replace(raw, "Merchant;", "Merchant;\r", 1), line: 2, msg: crMessage},
			{name: "CR line endings after the preamble", input: strings.Join(lines[:3], "") + crOnly(strings.Join(lines[3:], "")), line: 4, msg: crMessage},
		})
	})

	// A lone CR ending the file is the end of its last line, as
	// encoding/csv and bufio.ScanLines take it.
	t.Run("csv/CR at the end of the file", func(t *testing.T) {
		in := strings.TrimSuffix(readTestdata(t, "csv", "basic", "input.csv"), "\n") + "\r"
		if n := countRows(t, "csv", Options{}, in); n != 6 {
			t.Errorf("got %d rows, want 6", n)
		}
	})
}

// TestCRInQuotes: in a CSV a CR inside a quoted field is text, not a line
// ending, and is kept.
func TestCRInQuotes(t *testing.T) {
	for _, c := range sampleCases {
		if !c.csv {
			continue
		}
		t.Run(c.format, func(t *testing.T) {
			var want string
			in := c.withValue(t, func(v string) string {
				want = v[:3] + "\n\r" + v[3:] // encoding/csv reads CRLF as LF, in quotes too
				return `"` + v[:3] + "\r\n\r" + v[3:] + `"`
			})
			p, _ := Lookup(c.format)
			opts := c.options(t)
			opts.Name = "bill.csv"
			found := false
			err := p.Parse(t.Context(), strings.NewReader(in), opts, func(tx reconcile.Transaction) error {
				found = found || tx.OrderNo == want || tx.ChannelTxnID == want
				return nil
			})
			if err != nil || !found {
				t.Errorf("err = %v, row with %q found: %v; want no error and the row", err, want, found)
			}
		})
	}
}

// TestNUL: a NUL byte is valid UTF-8, so it got past the parsers and failed
// the run in PostgreSQL ("invalid byte sequence for encoding UTF8: 0x00")
// without file, line or column. Every field of every row is checked, the
// header's too.
func TestNUL(t *testing.T) {
	for _, c := range sampleCases {
		t.Run(c.format, func(t *testing.T) {
			header := insert(c.header, "\x00")
			runBadWith(t, c.format, c.options(t), []badCase{
				{name: "in a field", input: c.inField(t, "\x00"), line: c.line, column: c.column, msg: "NUL byte"},
				{name: "in the header", input: c.file(t, editor(t, c.text(t))(c.header, header)), line: c.headerLine, msg: "NUL byte"},
			})
		})
	}
}

// TestLongLine: the CSV readers read a line, or a quoted field, of any
// length into memory; like WeChat Pay's and Alipay's they now stop at
// maxLine bytes.
func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", maxLine)
	lines := `"` + strings.Repeat("x\n", maxLine/2+1) + `"`
	for _, c := range sampleCases {
		t.Run(c.format, func(t *testing.T) {
			tests := []badCase{
				{name: "long field", input: c.inField(t, long), line: c.line, msg: "line longer than 1048576 bytes"},
			}
			if c.csv {
				const msg = "line longer than 1048576 bytes (a quoted field runs from it past line "
				tests = append(tests,
					badCase{name: "long quoted field over many lines", input: c.withValue(t, func(string) string { return lines }), line: c.line, msg: msg},
					badCase{name: "quote not closed", input: c.upToField(t, func(v string) string { return `"` + v }) + strings.Repeat("\n", maxLine+1), line: c.line, msg: msg})
			}
			runBadWith(t, c.format, c.options(t), tests)
		})
	}
}

func countRows(t *testing.T, format string, opts Options, in string) int {
	t.Helper()
	p, err := Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	opts.Name = "bill.csv"
	n := 0
	err = p.Parse(t.Context(), strings.NewReader(in), opts, func(reconcile.Transaction) error {
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLinesByteByByte reads every format's sample, and the damaged
// versions of the tests above, one byte per read, so that every line end,
// CRLF and quote falls on a boundary between two reads: the rows and the
// error must be those of reading the file at once.
func TestLinesByteByByte(t *testing.T) {
	for _, c := range sampleCases {
		t.Run(c.format, func(t *testing.T) {
			raw := readTestdata(t, c.format, c.dir, "input.csv")
			inputs := map[string]string{
				"sample":          raw,
				"CRLF":            strings.ReplaceAll(strings.ReplaceAll(raw, "\r\n", "\n"), "\n", "\r\n"),
				"CR line endings": crOnly(raw),
				"CR in a field":   c.inField(t, "\r"),
				"CR before CRLF":  c.file(t, editor(t, c.text(t))(c.field, c.field+"\r")),
				"NUL in a field":  c.inField(t, "\x00"),
			}
			if c.csv {
				inputs["CR in quotes"] = c.withValue(t, func(v string) string { return `"` + v[:3] + "\r\n\r" + v[3:] + `"` })
			}
			p, _ := Lookup(c.format)
			opts := c.options(t)
			opts.Name = "bill.csv"
			parse := func(r io.Reader) ([]reconcile.Transaction, string) {
				var rows []reconcile.Transaction
				err := p.Parse(t.Context(), r, opts, func(tx reconcile.Transaction) error {
					rows = append(rows, tx)
					return nil
				})
				if err != nil {
					return rows, err.Error()
				}
				return rows, ""
			}
			for name, in := range inputs {
				want, wantErr := parse(strings.NewReader(in))
				got, gotErr := parse(iotest.OneByteReader(strings.NewReader(in)))
				if gotErr != wantErr || !reflect.DeepEqual(got, want) {
					t.Errorf("%s: byte by byte %d rows, error %q; at once %d rows, error %q", name, len(got), gotErr, len(want), wantErr)
				}
			}
		})
	}
}

func TestIndexBareCR(t *testing.T) {
	tests := []struct {
		line   string
		quotes bool
		want   int
	}{
		{"a,b", false, -1},
		{"a\r,b", false, 1},
		{"\"a\r\",b", false, 2},
		{"\"a\r\",b", true, -1},
		{"\"a\r\",b\r", true, 6},
		{"\"a\"\"\r\",b", true, -1},
		{"\"a\"\r\"b\"", true, 3},
		{"a,\"b\r", true, -1}, // an open quote runs to the end of the line
		{"\r", true, 0},
		{"", true, -1},
	}
	for _, tt := range tests {
		if got := indexBareCR([]byte(tt.line), tt.quotes); got != tt.want {
			t.Errorf("indexBareCR(%q, %v) = %d, want %d", tt.line, tt.quotes, got, tt.want)
		}
	}
}
