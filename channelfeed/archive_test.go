package channelfeed

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if _, _, err := collect(t, path, "csv"); err == nil || !strings.Contains(err.Error(), "a.csv, b.csv") {
		t.Errorf("ambiguous zip: got %v, want an error naming the entries", err)
	}
}
