package channelfeed

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"reconcile"
)

var decimalSeeds = []string{
	"99.80", "0", "0.00", "1200", "5.5", "0.59400", "-0.27000", "-0", "-", "+1", "", ".5", "5.", "1.2.3",
	"12.345", "12.3450", "1e3", "1,000.00", " 1", "007.10", "999999999999999999", "9999999999999999.99",
	"99999999999999999999.00", "9223372036854775807", "9223372036854775808", "--1", "1\x00",
}

// checkDecimal fails when a fast path reads s, at scale, other than
// reconcile.ParseDecimal does.
func checkDecimal(t *testing.T, s string, scale int) {
	t.Helper()
	want, err := reconcile.ParseDecimal(s, scale)
	if v, ok := signedDecimal(s, scale); ok && (err != nil || v != want) {
		t.Errorf("signedDecimal(%q, %d) = %d, true; ParseDecimal = %d, %v", s, scale, v, want, err)
	}
	if v, ok := plainDecimal(s, scale); ok && (err != nil || v != want || s[0] == '-') {
		t.Errorf("plainDecimal(%q, %d) = %d, true; ParseDecimal = %d, %v", s, scale, v, want, err)
	}
}

func TestDecimalFastPath(t *testing.T) {
	for _, s := range decimalSeeds {
		for scale := range 7 {
			checkDecimal(t, s, scale)
		}
	}
	// The fast path must take the common shapes, or it is no fast path.
	for _, tt := range []struct {
		s     string
		scale int
		want  int64
	}{
		{"99.80", 2, 9980}, {"1200", 2, 120000}, {"5.5", 2, 550}, {"-0.27000", 5, -27000}, {"45.500", 3, 45500}, {"0.00", 2, 0},
	} {
		if got, ok := signedDecimal(tt.s, tt.scale); !ok || got != tt.want {
			t.Errorf("signedDecimal(%q, %d) = %d, %v, want %d, true", tt.s, tt.scale, got, ok, tt.want)
		}
	}
}

func FuzzDecimalFastPath(f *testing.F) {
	for _, s := range decimalSeeds {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, scale int) {
		checkDecimal(t, s, scale&7)
	})
}

var dateTimeSeeds = []string{
	"2026-11-28 09:12:45", "2026-02-29 00:00:00", "2024-02-29 23:59:59", "2000-02-29 12:00:00", "1900-02-29 12:00:00",
	"2026-04-31 00:00:00", "2026-13-01 00:00:00", "2026-00-10 00:00:00", "2026-11-00 00:00:00", "2026-11-28 24:00:00",
	"2026-11-28 23:60:00", "2026-11-28 23:59:60", "2026-11-28 9:12:45", "2026-11-28 09:12:45.5", "2026-11-28T09:12:45",
	"0000-01-01 00:00:00", "9999-12-31 23:59:59", "2026-1a-28 09:12:45", "+026-11-28 09:12:45", "",
}

// checkDateTime fails when dateTime reads s other than
// time.ParseInLocation(time.DateTime) does.
func checkDateTime(t *testing.T, s string) {
	t.Helper()
	for _, loc := range []*time.Location{time.UTC, shanghai} {
		want, err := time.ParseInLocation(time.DateTime, s, loc)
		got, ok := dateTime(s, loc)
		if ok && (err != nil || got != want) {
			t.Errorf("dateTime(%q, %v) = %v, true; ParseInLocation = %v, %v", s, loc, got, want, err)
		}
	}
}

func TestDateTimeFastPath(t *testing.T) {
	for _, s := range dateTimeSeeds {
		checkDateTime(t, s)
	}
	if _, ok := dateTime("2026-11-28 09:12:45", shanghai); !ok {
		t.Error("dateTime refuses the usual shape")
	}
}

func FuzzDateTimeFastPath(f *testing.F) {
	for _, s := range dateTimeSeeds {
		f.Add(s)
	}
	f.Fuzz(checkDateTime)
}

// csvSeeds are inputs where the fast line reader and encoding/csv could
// part ways: line ends, blank lines, quotes early and late, a line longer
// than the read buffer.
func csvSeeds() []string {
	const h = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status\n"
	const r = "payment,ORD1,,TX1,99.80,CNY,2026-11-28T09:12:45+08:00,0.59880,SUCCESS\n"
	return []string{
		csvBase,
		h + r + "\n\r\n" + strings.ReplaceAll(r, "ORD1", "ORD2"),
		strings.ReplaceAll(h+r, "\n", "\r\n"),
		h + strings.TrimSuffix(r, "\n"),
		h + strings.TrimSuffix(r, "\n") + "\r",
		h + strings.TrimSuffix(r, "\n") + "\r\r\n",
		h + r + "\r",
		h + "\r" + r,
		h + r + strings.Replace(r, "ORD1", `"ORD,3"`, 1) + r,
		h + r + strings.Replace(r, "ORD1", "\"OR\nD3\"", 1) + r,
		h + r + strings.Replace(r, "ORD1", `OR"D3`, 1),
		h + r + "\n\n" + strings.Replace(r, "ORD1", `"ORD3`, 1),
		`"type",order_no,refund_no,channel_txn_id,amount,currency,occurred_at` + "\n" + r,
		h + strings.Replace(r, "SUCCESS", strings.Repeat("x", 70<<10), 1) + r,
		h + strings.Replace(r, "TX1", "T\xffX", 1),
		h + "payment,ORD1,,TX1,99.80,CNY,2026-11-28 09:12:45,,\n",
		"\xef\xbb\xbf" + h + r,
		"\n\n",
		"a,b\r",
		crOnly(h + r + r),
		h + strings.Replace(r, "ORD1", "OR\rD1", 1) + r,
		h + strings.Replace(r, "ORD1", "\"OR\rD1\"", 1) + r,
		h + r + "\r\n" + r + "\n\r",
		h + strings.Replace(r, "ORD1", "OR\x00D1", 1),
		strings.Replace(h, "type", "ty\x00pe", 1) + r,
		dh + dispute("chargeback", "50.00", "DSP1") + dispute("chargeback_reversal", "50.00", "DSP1") + dispute("Second_Chargeback", "50.00", ""),
		dh + dispute("chargeback", "50.00", "DSP1") + dispute("chargeback_reversal", "50.01", "DSP1"),
		dh + dispute("chargeback", "50.00", "DSP1") + strings.Replace(dispute("chargeback_reversal", "60.00", "DSP1"), "fraud", `"fraud, card lost"`, 1),
		dh + strings.Replace(r, "SUCCESS", "SUCCESS,,,", 1) + dispute("refund_reversal", "1.00", ""),
	}
}

// dh is the canonical header with the columns of a dispute's events.
const dh = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status,dispute_id,payment_txn_id,reason\n"

// dispute is a row of dh of type typ, amount and dispute id.
func dispute(typ, amount, id string) string {
	return typ + ",ORD1,,CB1," + amount + ",CNY,2026-11-28T18:00:00+08:00,15.00,," + id + ",TX1,fraud\n"
}

// TestCSVFastPathLongLines holds the fast line reader to encoding/csv on
// lines past maxLine, which a fuzzer would spend its time on.
func TestCSVFastPathLongLines(t *testing.T) {
	const h = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,status\n"
	const r = "payment,ORD1,,TX1,99.80,CNY,2026-11-28T09:12:45+08:00,0.59880,SUCCESS\n"
	for _, s := range []string{
		h + strings.Replace(r, "SUCCESS", strings.Repeat("x", maxLine), 1),
		h + r + strings.Replace(r, "SUCCESS", strings.Repeat("x", maxLine-len(r)), 1) + r,
		h + strings.Replace(r, "SUCCESS", `"`+strings.Repeat("x\r\n", maxLine/3)+`"`, 1),
		h + strings.Replace(r, "ORD1", `"ORD1`, 1) + strings.Repeat(r, maxLine/len(r)+1),
		h + strings.Repeat("x", 70<<10) + "\r" + r,
	} {
		checkCSVFastPath(t, []byte(s), 0)
		checkCSVFastPath(t, []byte(s), len(s)/2)
	}
}

// FuzzCSVFastPath checks that the canonical CSV reads every input, whole
// or cut short by a read error, exactly as it does through encoding/csv
// alone: the same rows, the same error text.
func FuzzCSVFastPath(f *testing.F) {
	for _, s := range csvSeeds() {
		f.Add([]byte(s), uint16(0))
		f.Add([]byte(s), uint16(len(s)/2))
	}
	for _, s := range readTestdataGlob(f, "csv") {
		f.Add(s, uint16(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		checkCSVFastPath(t, data, int(cut))
	})
}

// checkCSVFastPath fails unless data, cut short by a read error after cut
// bytes, reads the same through the fast line reader and encoding/csv.
func checkCSVFastPath(t *testing.T, data []byte, cut int) {
	t.Helper()
	fast, fastErr := parseCSVRows(t, csvParser{}, data, cut)
	slow, slowErr := parseCSVRows(t, csvParser{viaEncodingCSV: true}, data, cut)
	if fastErr != slowErr {
		t.Fatalf("error %q, through encoding/csv %q", fastErr, slowErr)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("rows differ:\n%+v\nthrough encoding/csv:\n%+v", fast, slow)
	}
}

var errCut = errors.New("connection reset")

// parseCSVRows parses data, failing the read with errCut after cut bytes
// when cut is within data.
func parseCSVRows(t *testing.T, p csvParser, data []byte, cut int) ([]reconcile.Transaction, string) {
	var r io.Reader = bytes.NewReader(data)
	if cut > 0 && cut < len(data) {
		r = io.MultiReader(bytes.NewReader(data[:cut]), iotest.ErrReader(errCut))
	}
	var rows []reconcile.Transaction
	err := p.Parse(t.Context(), r, Options{Name: "fuzz.csv", Location: shanghai}, func(tx reconcile.Transaction) error {
		rows = append(rows, tx)
		return nil
	})
	if err != nil {
		return rows, err.Error()
	}
	return rows, ""
}

func readTestdataGlob(f *testing.F, format string) [][]byte {
	inputs, err := filepath.Glob(filepath.Join("testdata", format, "*", "input.csv"))
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// splitRowSplit is the plain reading of a WeChat Pay row that splitRow
// must match.
func splitRowSplit(s string) ([]string, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "`") {
		return nil, false
	}
	fields := strings.Split(s[1:], ",`")
	for i, f := range fields {
		fields[i] = strings.TrimSpace(f)
	}
	return fields, true
}

// FuzzSplitRow checks splitRow against strings.Split, and that a row's
// fields are valid UTF-8 exactly when the line is, which lets the parser
// check the line once.
func FuzzSplitRow(f *testing.F) {
	for _, s := range []string{"", "`", "`a", "`a,`b", "`,`", "`,`,`", "`a,,`b,`", " `a , ` b\u3000,`\u00a0c\t", "`a,`\xe4,`\xb8\xad", "`\xe3\x80\x80,`x", "a,`b", "`a,``b"} {
		f.Add(s)
	}
	for _, b := range readTestdataGlob(f, "wechatpay") {
		for _, line := range strings.Split(string(b), "\n") {
			f.Add(line)
		}
	}
	var dst []string
	f.Fuzz(func(t *testing.T, s string) {
		want, wantOK := splitRowSplit(s)
		got, ok := splitRow(dst, s)
		dst = got
		if ok != wantOK || !slices.Equal(got, want) {
			t.Fatalf("splitRow(%q) = %q, %v, want %q, %v", s, got, ok, want, wantOK)
		}
		if !ok {
			return
		}
		allValid := true
		for _, v := range got {
			allValid = allValid && utf8.ValidString(v)
		}
		if allValid != utf8.ValidString(s) {
			t.Fatalf("%q: fields valid UTF-8 %v, line %v", s, allValid, !allValid)
		}
	})
}

// TestPrintableASCII checks printableASCII against the plain loop for
// every byte value at every place of a line of two words and a tail.
func TestPrintableASCII(t *testing.T) {
	plain := func(b []byte) bool {
		for _, c := range b {
			if c < ' ' || c > '~' {
				return false
			}
		}
		return true
	}
	for n := range 20 {
		for at := range n {
			for c := range 256 {
				b := bytes.Repeat([]byte{' '}, n)
				b[at] = byte(c)
				if got, want := printableASCII(b), plain(b); got != want {
					t.Fatalf("printableASCII(%q) = %v, want %v", b, got, want)
				}
				b = bytes.Repeat([]byte{'~'}, n)
				b[at] = byte(c)
				if got, want := printableASCII(b), plain(b); got != want {
					t.Fatalf("printableASCII(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

// FuzzTrimSpace checks trimSpace against strings.TrimSpace: white space of
// one byte or several at either edge, text of several bytes, bytes that
// are not UTF-8.
func FuzzTrimSpace(f *testing.F) {
	for _, s := range []string{"", " ", "a", " a", "a ", "\ta\n", "买家已支付", "\u3000买家", "买家\u3000", "\u00a0x",
		"x\u00a0", "\u2003", "\x85a", "a\xe4", "\xe4\xb8", "\x7fa\x7f", "\x01a", "a\u200b", "\u0085z\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := trimSpace(s), strings.TrimSpace(s); got != want {
			t.Fatalf("trimSpace(%q) = %q, want %q", s, got, want)
		}
	})
}
