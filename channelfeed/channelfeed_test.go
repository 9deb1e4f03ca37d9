package channelfeed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
)

var update = flag.Bool("update", false, "rewrite testdata/<format>/<case>/want.json from the parsers' output")

// shanghai stands in for Asia/Shanghai (no DST since 1991) without
// depending on the host's zone database.
var shanghai = time.FixedZone("CST", 8*60*60)

// caseOptions is a golden case's optional options.json: the parser
// settings of a channel's config.
type caseOptions struct {
	OrderKey, RefundKey string
	Mapping             *Mapping
}

func loadCaseOptions(t testing.TB, dir string) Options {
	t.Helper()
	opts := Options{Location: shanghai}
	b, err := os.ReadFile(filepath.Join(dir, "options.json"))
	if errors.Is(err, os.ErrNotExist) {
		return opts
	}
	if err != nil {
		t.Fatal(err)
	}
	var co caseOptions
	if err := json.Unmarshal(b, &co); err != nil {
		t.Fatalf("%s/options.json: %v", dir, err)
	}
	opts.OrderKey, opts.RefundKey, opts.Mapping = co.OrderKey, co.RefundKey, co.Mapping
	return opts
}

// TestGolden parses every testdata/<format>/<case>/input.* through
// ParseFile, with the case's options.json when there is one, and compares
// the emitted rows with want.json.
func TestGolden(t *testing.T) {
	for _, format := range Formats() {
		inputs, err := filepath.Glob(filepath.Join("testdata", format, "*", "input.*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(inputs) == 0 {
			t.Errorf("no golden cases for format %s", format)
		}
		for _, input := range inputs {
			dir := filepath.Dir(input)
			t.Run(format+"/"+filepath.Base(dir), func(t *testing.T) {
				got := []reconcile.Transaction{}
				info, err := ParseFile(t.Context(), input, format, loadCaseOptions(t, dir), func(tx reconcile.Transaction) error {
					got = append(got, tx)
					return nil
				})
				if err != nil {
					t.Fatalf("ParseFile: %v", err)
				}
				raw, err := os.ReadFile(input)
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(raw)
				if want := hex.EncodeToString(sum[:]); info.SHA256 != want {
					t.Errorf("SHA256 = %s, want %s", info.SHA256, want)
				}
				if info.Bytes != int64(len(raw)) || info.Rows != len(got) || info.Path != input {
					t.Errorf("FileInfo = %+v, want Path %s, Bytes %d, Rows %d", info, input, len(raw), len(got))
				}

				b, err := json.MarshalIndent(got, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				b = append(b, '\n')
				golden := filepath.Join(dir, "want.json")
				if *update {
					if err := os.WriteFile(golden, b, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update to create it)", err)
				}
				if !bytes.Equal(b, want) {
					t.Errorf("rows differ from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, b, want)
				}
			})
		}
	}
}

// TestSampleFacts pins what the golden file of the sample bill must say,
// so a wrong want.json cannot be refreshed into place unnoticed.
func TestSampleFacts(t *testing.T) {
	rows := parseAll(t, "wechatpay", filepath.Join("testdata", "wechatpay", "sample", "input.csv"))
	if got, want := len(rows), 15; got != want {
		t.Fatalf("rows = %d, want %d", got, want)
	}
	byKey := map[string]reconcile.Transaction{}
	var payments, refunds int
	for _, r := range rows {
		switch r.Kind {
		case reconcile.KindPayment:
			payments++
		case reconcile.KindRefund:
			refunds++
		}
		byKey[string(r.Kind)+"/"+r.Key()] = r
	}
	if payments != 9 || refunds != 6 {
		t.Errorf("payments, refunds = %d, %d, want 9, 6", payments, refunds)
	}
	p := byKey["payment/ORD202611280008"]
	if p.Amount != 5000 || p.FeeMilli != 27000 || p.ChannelTxnID != "4200009999202611280000000008" || p.Line != 9 {
		t.Errorf("ORD202611280008 = %+v, want Amount 5000, FeeMilli 27000, ChannelTxnID …0008, Line 9", p)
	}
	if want := time.Date(2026, 11, 28, 14, 8, 22, 0, shanghai); !p.OccurredAt.Equal(want) {
		t.Errorf("ORD202611280008 OccurredAt = %v, want %v", p.OccurredAt, want)
	}
	r := byKey["refund/RF202611280004"]
	if r.Status != reconcile.StatusProcessing || r.Amount != 10000 || r.OrderNo != "ORD202611280006" || r.ChannelTxnID != "50300099992026112800000000005" || r.FeeMilli != -60000 {
		t.Errorf("RF202611280004 = %+v, want processing, 10000, ORD202611280006, …0005, FeeMilli -60000", r)
	}
	if r := byKey["refund/RF202611280005"]; r.Amount != 5000 {
		t.Errorf("RF202611280005 Amount = %d, want 5000 (申请退款金额, not 退款金额)", r.Amount)
	}
	if p := byKey["payment/ORD202611280007"]; p.Amount != 8000 {
		t.Errorf("ORD202611280007 Amount = %d, want 8000", p.Amount)
	}
}

// rowsByLine parses the input of golden case name of format and gives
// its rows by line.
func rowsByLine(t *testing.T, format, name string) map[int]reconcile.Transaction {
	t.Helper()
	byLine := map[int]reconcile.Transaction{}
	for _, r := range parseAll(t, format, filepath.Join("testdata", format, name, "input.csv")) {
		byLine[r.Line] = r
	}
	return byLine
}

func parseAll(t *testing.T, format, path string) []reconcile.Transaction {
	t.Helper()
	var rows []reconcile.Transaction
	_, err := ParseFile(t.Context(), path, format, Options{Location: shanghai}, func(tx reconcile.Transaction) error {
		rows = append(rows, tx)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestLongestKeys: an order number, refund number and channel id of
// exactly reconcile.MaxKeyBytes are taken as they are (one past is
// refused, see TestCSVErrors).
func TestLongestKeys(t *testing.T) {
	key := func(c string) string { return strings.Repeat(c, reconcile.MaxKeyBytes) }
	input := "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n" +
		"refund," + key("O") + "," + key("R") + "," + key("T") + ",1.00,CNY,2026-11-28T10:00:00+08:00\n"
	p, err := Lookup("csv")
	if err != nil {
		t.Fatal(err)
	}
	var got []reconcile.Transaction
	if err := p.Parse(t.Context(), strings.NewReader(input), Options{Location: shanghai}, func(tx reconcile.Transaction) error {
		got = append(got, tx.Clone())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].OrderNo != key("O") || got[0].RefundNo != key("R") || got[0].ChannelTxnID != key("T") {
		t.Fatalf("got %d rows, want the one row with its keys whole", len(got))
	}
}

func TestLookup(t *testing.T) {
	if got, want := strings.Join(Formats(), ","), "adyen,alipay,csv,mapped,stripe,wechatpay"; got != want {
		t.Errorf("Formats() = %s, want %s", got, want)
	}
	for _, f := range Formats() {
		if _, err := Lookup(f); err != nil {
			t.Errorf("Lookup(%q): %v", f, err)
		}
	}
	_, err := Lookup("nope")
	if !errors.Is(err, reconcile.ErrUnknownFormat) {
		t.Fatalf("Lookup(nope) = %v, want an error wrapping ErrUnknownFormat", err)
	}
	for _, want := range []string{`"nope"`, "csv", "wechatpay"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Lookup(nope) error %q does not mention %s", err, want)
		}
	}
	if _, err := ParseFile(t.Context(), "testdata/csv/basic/input.csv", "nope", Options{}, nil); !errors.Is(err, reconcile.ErrUnknownFormat) {
		t.Errorf("ParseFile with format nope = %v, want ErrUnknownFormat", err)
	}
}

func TestParseFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop.csv")
	if err := os.Symlink(filepath.Join(dir, "loop2.csv"), loop); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	if err := os.Symlink(loop, filepath.Join(dir, "loop2.csv")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	abs, err := filepath.Abs("testdata/csv/basic/input.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, path, want string
	}{
		{"directory", dir, "is a directory"},
		{"symlink loop", loop, "symbolic link loop"},
		{"missing", filepath.Join(dir, "nothing.csv"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			info, err := ParseFile(t.Context(), tt.path, "csv", Options{}, func(reconcile.Transaction) error {
				calls++
				return nil
			})
			if err == nil {
				t.Fatalf("ParseFile(%s) = %+v, want an error", tt.path, info)
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to name %s and say %q", err, tt.path, tt.want)
			}
			if calls != 0 {
				t.Errorf("emit called %d times", calls)
			}
		})
	}

	t.Run("symlink to a file", func(t *testing.T) {
		info, err := ParseFile(t.Context(), link, "csv", Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := info.Rows, 6; got != want {
			t.Errorf("Rows = %d, want %d", got, want)
		}
	})
}

func TestParseStops(t *testing.T) {
	for _, format := range Formats() {
		dir := filepath.Join("testdata", format, "basic")
		switch format {
		case "wechatpay":
			dir = filepath.Join("testdata", format, "sample")
		case "mapped":
			dir = filepath.Join("testdata", format, "semicolon_minor_units")
		}
		input := filepath.Join(dir, "input.csv")
		t.Run(format+"/emit error", func(t *testing.T) {
			stop := errors.New("stop")
			calls := 0
			_, err := ParseFile(t.Context(), input, format, loadCaseOptions(t, dir), func(reconcile.Transaction) error {
				calls++
				if calls == 2 {
					return stop
				}
				return nil
			})
			if err != stop {
				t.Errorf("err = %v, want emit's error as is", err)
			}
			if calls != 2 {
				t.Errorf("emit called %d times after its error, want 2 calls", calls)
			}
		})
		t.Run(format+"/cancelled", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			_, err := ParseFile(ctx, input, format, loadCaseOptions(t, dir), nil)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		})
	}
}

// TestCancelMidway checks that a long file stops within ctxEvery rows of
// the cancellation.
func TestCancelMidway(t *testing.T) {
	var b strings.Builder
	b.WriteString("type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n")
	for i := range 3 * ctxEvery {
		b.WriteString("payment,ORD")
		b.WriteString(strings.Repeat("9", 1+i%5))
		b.WriteString(",,TXN,1.00,CNY,2026-11-28T00:00:00Z\n")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n := 0
	p, _ := Lookup("csv")
	err := p.Parse(ctx, strings.NewReader(b.String()), Options{Name: "big.csv"}, func(reconcile.Transaction) error {
		n++
		if n == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n > ctxEvery {
		t.Errorf("emitted %d rows after cancel, want at most %d", n, ctxEvery)
	}
}

// TestTimeWindow: a row dated far from the file's business date (year 0,
// 9999, 1999 in a 2026 file) stops the file, in every format, whether it
// is read through ParseFile or a Parser from Lookup. The bounds are
// inclusive, and a zero bound is not checked.
func TestTimeWindow(t *testing.T) {
	for _, c := range sampleCases {
		t.Run(c.format, func(t *testing.T) {
			dir := filepath.Join("testdata", c.format, c.dir)
			input := filepath.Join(dir, "input.csv")
			var rows []reconcile.Transaction
			if _, err := ParseFile(t.Context(), input, c.format, c.options(t), func(tx reconcile.Transaction) error {
				rows = append(rows, tx)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			first, last := rows[0].OccurredAt, rows[0].OccurredAt
			for _, r := range rows {
				if r.OccurredAt.Before(first) {
					first = r.OccurredAt
				}
				if r.OccurredAt.After(last) {
					last = r.OccurredAt
				}
			}
			// firstOutside is the first row out of [from, to].
			firstOutside := func(from, to time.Time) reconcile.Transaction {
				for _, r := range rows {
					if r.OccurredAt.Before(from) || r.OccurredAt.After(to) {
						return r
					}
				}
				t.Fatalf("no row outside %v to %v", from, to)
				return reconcile.Transaction{}
			}
			tests := []struct {
				name             string
				earliest, latest time.Time
				wantOK           bool
				wantFrom, wantTo time.Time // the window in the message
			}{
				{"no window", time.Time{}, time.Time{}, true, time.Time{}, time.Time{}},
				{"exactly the rows' times", first, last, true, time.Time{}, time.Time{}},
				{"earliest only", first, time.Time{}, true, time.Time{}, time.Time{}},
				{"a row before earliest", first.Add(time.Second), last, false, first.Add(time.Second), last},
				{"a row after latest", first, last.Add(-time.Second), false, first, last.Add(-time.Second)},
				{"a row after latest, no earliest", time.Time{}, last.Add(-time.Second), false, time.Time{}, last.Add(-time.Second)},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					opts := c.options(t)
					opts.Name = "bill.csv"
					opts.Earliest, opts.Latest = tt.earliest, tt.latest
					p, err := Lookup(c.format)
					if err != nil {
						t.Fatal(err)
					}
					for _, via := range []string{"ParseFile", "Lookup"} {
						n := 0
						count := func(reconcile.Transaction) error { n++; return nil }
						if via == "ParseFile" {
							_, err = ParseFile(t.Context(), input, c.format, opts, count)
						} else {
							err = p.Parse(t.Context(), strings.NewReader(readTestdata(t, c.format, c.dir, "input.csv")), opts, count)
						}
						if tt.wantOK {
							if err != nil || n != len(rows) {
								t.Errorf("%s: %d rows, %v; want %d rows, no error", via, n, err, len(rows))
							}
							continue
						}
						want := firstOutside(tt.wantFrom, tt.wantTo)
						var pe *reconcile.ParseError
						if !errors.As(err, &pe) || pe.File != "bill.csv" || pe.Line != want.Line {
							t.Fatalf("%s: err = %v, want a *reconcile.ParseError at bill.csv:%d", via, err, want.Line)
						}
						loc := opts.Location
						msg := err.Error()
						for _, s := range []string{want.OccurredAt.In(loc).Format(time.RFC3339), tt.wantTo.In(loc).Format(time.RFC3339), "outside"} {
							if !strings.Contains(msg, s) {
								t.Errorf("%s: message %q does not say %s", via, msg, s)
							}
						}
						if !tt.wantFrom.IsZero() && !strings.Contains(msg, tt.wantFrom.In(loc).Format(time.RFC3339)) {
							t.Errorf("%s: message %q does not say the window's start %s", via, msg, tt.wantFrom.In(loc).Format(time.RFC3339))
						}
						if n >= len(rows) {
							t.Errorf("%s: %d rows emitted, want the file stopped", via, n)
						}
					}
				})
			}
		})
	}
}

// TestTimeWindowMessage pins the words of the error for a row of 1999 in
// a file of 2026-11-28.
func TestTimeWindowMessage(t *testing.T) {
	in := strings.Replace(csvBase, "2026-11-28T10:00:00+08:00", "1999-11-28T10:00:00+08:00", 1)
	day := time.Date(2026, 11, 28, 0, 0, 0, 0, shanghai)
	tests := []struct {
		name             string
		earliest, latest time.Time
		want             string
	}{
		{"window", day.AddDate(0, 0, -1), day.AddDate(0, 0, 2),
			"bill.csv:3: row time 1999-11-28T10:00:00+08:00 is outside the window 2026-11-27T00:00:00+08:00 to 2026-11-30T00:00:00+08:00"},
		{"earliest only", day.AddDate(0, 0, -1), time.Time{},
			"bill.csv:3: row time 1999-11-28T10:00:00+08:00 is outside the window from 2026-11-27T00:00:00+08:00 on"},
	}
	p, _ := Lookup("csv")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Parse(t.Context(), strings.NewReader(in), Options{Name: "bill.csv", Location: shanghai, Earliest: tt.earliest, Latest: tt.latest}, nil)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestParseFingerprinted: a parse given the file's fingerprint returns
// its SHA-256 when the bytes are the same, and refuses the file when they
// changed after it was fingerprinted, however little: one byte of the
// same length, a line appended, its last line cut.
func TestParseFingerprinted(t *testing.T) {
	const file = "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n" +
		"payment,O1,,T1,1.00,CNY,2026-11-28T10:00:00Z\n" +
		"payment,O2,,T2,2.00,CNY,2026-11-28T11:00:00Z\n"
	path := filepath.Join(t.TempDir(), "bill.csv")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(file)
	fp, err := Fingerprint(path)
	if err != nil {
		t.Fatal(err)
	}
	parse := func() (FileInfo, error) {
		return ParseFile(t.Context(), path, "csv", Options{Location: time.UTC, Fingerprinted: &fp}, nil)
	}
	info, err := parse()
	sum := sha256.Sum256([]byte(file))
	if err != nil || info.SHA256 != hex.EncodeToString(sum[:]) || info.Rows != 2 || info.Bytes != int64(len(file)) {
		t.Fatalf("same file: got %+v, %v; want its SHA-256, 2 rows and %d bytes", info, err, len(file))
	}
	for name, changed := range map[string]string{
		"one byte":      strings.Replace(file, "2.00", "3.00", 1),
		"line appended": file + "payment,O3,,T3,3.00,CNY,2026-11-28T12:00:00Z\n",
		"last line cut": file[:strings.LastIndex(file[:len(file)-1], "\n")+1],
	} {
		write(changed)
		if info, err := parse(); !errors.Is(err, ErrFileChanged) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %+v, %v; want ErrFileChanged naming the file", name, info, err)
		}
	}
}

// TestFingerprintLargeFile: a file of several read chunks gets the
// SHA-256 and line count of its bytes in their order.
func TestFingerprintLargeFile(t *testing.T) {
	var b bytes.Buffer
	for i := 0; b.Len() < 3<<20+12345; i++ {
		fmt.Fprintf(&b, "line %d of a file larger than a chunk\n", i)
	}
	path := filepath.Join(t.TempDir(), "large.csv")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := Fingerprint(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b.Bytes())
	if info.SHA256 != hex.EncodeToString(sum[:]) || info.Bytes != int64(b.Len()) || info.Rows != bytes.Count(b.Bytes(), []byte{'\n'}) {
		t.Errorf("got %s, %d bytes, %d lines; want %x, %d, %d", info.SHA256, info.Bytes, info.Rows, sum, b.Len(), bytes.Count(b.Bytes(), []byte{'\n'}))
	}
}
