package channelfeed

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"

	"reconcile"
)

func collect(t *testing.T, path, format string) ([]reconcile.Transaction, FileInfo, error) {
	t.Helper()
	var rows []reconcile.Transaction
	info, err := ParseFile(t.Context(), path, format, Options{Location: shanghai}, func(tx reconcile.Transaction) error {
		rows = append(rows, tx)
		return nil
	})
	return rows, info, err
}

// TestGzipBill: WeChat Pay delivers the bill gzipped with tar_type=GZIP;
// the rows must be those of the plain bill and the hash that of the
// delivered bytes.
func TestGzipBill(t *testing.T) {
	plain := "testdata/wechatpay/sample/input.csv"
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	gz := filepath.Join(t.TempDir(), "bill.csv.gz")
	os.WriteFile(gz, buf.Bytes(), 0o644)

	want, _, err := collect(t, plain, "wechatpay")
	if err != nil {
		t.Fatal(err)
	}
	got, info, err := collect(t, gz, "wechatpay")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || got[len(got)-1] != want[len(want)-1] {
		t.Errorf("gzip rows: got %d, want %d equal to the plain bill's", len(got), len(want))
	}
	sum := sha256.Sum256(buf.Bytes())
	if info.SHA256 != hex.EncodeToString(sum[:]) || info.Bytes != int64(buf.Len()) {
		t.Errorf("info: got %s %d bytes, want the gzip file's hash and size", info.SHA256, info.Bytes)
	}

	// A truncated gzip stream is an error, not a shorter bill.
	cut := filepath.Join(t.TempDir(), "cut.csv.gz")
	os.WriteFile(cut, buf.Bytes()[:buf.Len()/2], 0o644)
	if _, _, err := collect(t, cut, "wechatpay"); err == nil {
		t.Error("truncated gzip: got no error")
	}
}

// TestZipPicksDetailEntry: an archive whose entry names are GBK without
// the UTF-8 flag, holding the detail bill and its summary sibling.
func TestZipPicksDetailEntry(t *testing.T) {
	gbk := func(s string) string {
		b, err := simplifiedchinese.GBK.NewEncoder().String(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	raw, err := os.ReadFile("testdata/csv/basic/input.csv")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct{ name, body string }{
		{"20880000000000000156_20261128_业务明细(汇总).csv", "not the detail"},
		{"20880000000000000156_20261128_业务明细.csv", string(raw)},
	} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: gbk(e.name), Method: zip.Deflate, NonUTF8: true})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	zw.Close()
	path := filepath.Join(t.TempDir(), "bill.csv.zip")
	os.WriteFile(path, buf.Bytes(), 0o644)

	got, info, err := collect(t, path, "csv")
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := collect(t, "testdata/csv/basic/input.csv", "csv")
	if len(got) != len(want) || len(got) == 0 {
		t.Errorf("rows: got %d, want %d", len(got), len(want))
	}
	sum := sha256.Sum256(buf.Bytes())
	if info.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256: got %s, want the archive's", info.SHA256)
	}

	// Two unrelated CSVs: which one is the bill is not guessed.
	buf.Reset()
	zw = zip.NewWriter(&buf)
	for _, n := range []string{"a.csv", "b.csv"} {
		w, _ := zw.Create(n)
		w.Write(raw)
	}
	zw.Close()
	os.WriteFile(path, buf.Bytes(), 0o644)
	if _, _, err := collect(t, path, "csv"); err == nil || !strings.Contains(err.Error(), `"a.csv", "b.csv"`) {
		t.Errorf("ambiguous zip: got %v, want an error naming the entries", err)
	}
}

// writeZip writes an archive of the entries, in the order given.
func writeZip(t *testing.T, entries ...[2]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bill.zip")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestZipEntryNames: the entry's name becomes part of the file name in
// every error, which the run's record stores as text and a log shows on
// one line, so a name with a NUL byte or a line break is refused, quoted;
// and an archive of many entries is not listed whole in an error.
func TestZipEntryNames(t *testing.T) {
	raw, err := os.ReadFile("testdata/csv/basic/input.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bill\x00.csv", "bill\n.csv", "bill\u0085.csv"} {
		_, _, err := collect(t, writeZip(t, [2]string{name, string(raw)}), "csv")
		if err == nil {
			t.Errorf("entry %q: no error", name)
			continue
		}
		if msg := err.Error(); !utf8.ValidString(msg) || strings.ContainsAny(msg, "\x00\n") || !strings.Contains(msg, reconcile.Quote(name)) {
			t.Errorf("entry %q: error %q, want it to quote the name and hold no NUL, line break or invalid UTF-8", name, msg)
		}
	}

	var many [][2]string
	for i := range 30 {
		many = append(many, [2]string{fmt.Sprintf("e%02d.csv", i), string(raw)})
	}
	_, _, err = collect(t, writeZip(t, many...), "csv")
	if err == nil || !strings.Contains(err.Error(), `"e00.csv", "e01.csv"`) || strings.Contains(err.Error(), "e29.csv") || !strings.Contains(err.Error(), "and 20 more") {
		t.Errorf("30 entries: err = %v, want the first ten quoted and the rest counted", err)
	}
}

// TestNestedArchive: one level of archive is unpacked; a second one (a
// gzipped ZIP, a gzip file as the ZIP's CSV entry) read as text failed
// with a misleading "missing required column (header: "PK\x03\x04")".
func TestNestedArchive(t *testing.T) {
	raw, err := os.ReadFile("testdata/csv/basic/input.csv")
	if err != nil {
		t.Fatal(err)
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	zipped, err := os.ReadFile(writeZip(t, [2]string{"bill.csv", string(raw)}))
	if err != nil {
		t.Fatal(err)
	}
	gzipOfZip := filepath.Join(t.TempDir(), "bill.zip.gz")
	if err := os.WriteFile(gzipOfZip, gz(zipped), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{gzipOfZip, "bill.zip.gz: a ZIP archive inside the gzip archive, not a settlement file: unpack it first"},
		{writeZip(t, [2]string{"bill.csv", string(gz(raw))}), "bill.zip:bill.csv: a gzip archive inside the ZIP archive, not a settlement file: unpack it first"},
	} {
		_, _, err := collect(t, tt.path, "csv")
		if _, ok := errors.AsType[*reconcile.ParseError](err); !ok || !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want a *reconcile.ParseError ending in %q", tt.path, err, tt.want)
		}
	}
}
