package fetch_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reconcile/fetch"
)

// offer hands out body, stating what states says.
func offer(body []byte, size int64, digest []byte, opened *int) *fetch.Offer {
	o := &fetch.Offer{Name: "bill 2026-11-28", Size: size, Open: func(context.Context) (io.ReadCloser, error) {
		*opened++
		return io.NopCloser(bytes.NewReader(body)), nil
	}}
	if digest != nil {
		o.Digest = &fetch.Digest{Name: "SHA1", New: sha1.New, Sum: digest}
	}
	return o
}

func sha1Of(b []byte) []byte { s := sha1.Sum(b); return s[:] }

// leftovers lists the files of dir other than want.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range ents {
		if !strings.Contains(strings.Join(want, "\x00"), e.Name()) {
			extra = append(extra, e.Name())
		}
	}
	return extra
}

func TestSave(t *testing.T) {
	bill := []byte("交易时间,公众账号ID\n`2026-11-28 10:00:00,`wx1\n")
	ctx := context.Background()

	t.Run("new file arrives whole, then the same offer writes nothing", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "20261128_ALL.csv.gz")
		opened := 0
		got, err := fetch.Save(ctx, offer(bill, -1, sha1Of(bill), &opened), path, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if !bytes.Equal(b, bill) || !got.Changed || got.Replaced || got.Bytes != int64(len(bill)) {
			t.Errorf("got %+v and %q; want the bill, changed, not replaced", got, b)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want -rw-r-----", st.Mode().Perm())
		}
		again, err := fetch.Save(ctx, offer(bill, -1, sha1Of(bill), &opened), path, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if again.Changed || opened != 1 || again.SHA256 != got.SHA256 {
			t.Errorf("same digest again: got %+v after %d downloads; want unchanged, not downloaded again", again, opened)
		}
		// Without a stated digest it is downloaded, compared, and left.
		third, err := fetch.Save(ctx, offer(bill, int64(len(bill)), nil, &opened), path, 0, nil)
		if err != nil || third.Changed || opened != 2 {
			t.Errorf("same bytes without a digest: got %+v, %v after %d downloads; want unchanged after 2", third, err, opened)
		}
		if extra := leftovers(t, dir, "20261128_ALL.csv.gz"); len(extra) > 0 {
			t.Errorf("left in the inbox: %v", extra)
		}
	})

	t.Run("corrected file replaces the old one", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "bill.csv")
		if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
			t.Fatal(err)
		}
		opened := 0
		got, err := fetch.Save(ctx, offer(bill, -1, sha1Of(bill), &opened), path, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, bill) || !got.Changed || !got.Replaced {
			t.Errorf("got %+v and %q; want the new bill, replaced", got, b)
		}
		kept, _ := filepath.Glob(path + ".superseded-*")
		if len(kept) != 1 {
			t.Fatalf("kept beside it: %v, want the old file once", kept)
		}
		if b, _ := os.ReadFile(kept[0]); string(b) != "old\n" {
			t.Errorf("%s holds %q, want the old bytes", kept[0], b)
		}
	})

	refusals := []struct {
		name  string
		offer *fetch.Offer
		check func(string) error
		limit int64
		want  string
	}{
		{"hash differs", offer(bill, -1, sha1Of([]byte("other")), new(int)), nil, 0, "SHA1"},
		{"shorter than stated", offer(bill, int64(len(bill))+1, nil, new(int)), nil, 0, "cut short"},
		{"stated size past the limit", offer(bill, 1<<40, nil, new(int)), nil, 1 << 20, "more than the"},
		{"stream past the limit", offer(bill, -1, nil, new(int)), nil, 10, "more than 10 bytes"},
		{"empty", offer(nil, -1, nil, new(int)), nil, 0, "empty"},
		{"the parser refuses it", offer([]byte(`{"code":"SYSTEM_ERROR"}`), -1, nil, new(int)),
			func(tmp string) error { return errors.New("line 1: not a WeChat Pay bill") }, 0, "not a WeChat Pay bill"},
	}
	for _, tt := range refusals {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "bill.csv")
			if err := os.WriteFile(path, []byte("kept\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			_, err := fetch.Save(ctx, tt.offer, path, tt.limit, tt.check)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, fetch.ErrBadFile) {
				t.Fatalf("got %v, want fetch.ErrBadFile saying %q", err, tt.want)
			}
			if b, _ := os.ReadFile(path); string(b) != "kept\n" {
				t.Errorf("the file in place became %q; want it kept", b)
			}
			if extra := leftovers(t, dir, "bill.csv"); len(extra) > 0 {
				t.Errorf("left in the inbox: %v", extra)
			}
		})
	}

	t.Run("the check sees the whole download under a hidden name", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "wechatpay", "bill.csv") // the directory is made
		var seen []byte
		var name string
		_, err := fetch.Save(ctx, offer(bill, -1, nil, new(int)), path, 0, func(tmp string) error {
			name = filepath.Base(tmp)
			seen, _ = os.ReadFile(tmp)
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the final name exists before the check passed: %v", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(seen, bill) || !strings.HasPrefix(name, ".") {
			t.Errorf("check saw %q in %q; want the whole bill in a hidden sibling", seen, name)
		}
	})
}

// BenchmarkSave: a 64 MiB download with a stated SHA1 put in place (the
// hashes and the write; the parser's look is the caller's).
func BenchmarkSave(b *testing.B) {
	body := bytes.Repeat([]byte("`2026-11-28 10:00:00,`wx00000000fake0001,`1900000109,`0,`4200009999202611280000000013\r\n"), 64<<20/96)
	sum := sha1Of(body)
	dir := b.TempDir()
	b.SetBytes(int64(len(body)))
	for i := 0; b.Loop(); i++ {
		opened := 0
		if _, err := fetch.Save(context.Background(), offer(body, int64(len(body)), sum, &opened), filepath.Join(dir, fmt.Sprintf("bill-%d.csv", i)), 0, nil); err != nil {
			b.Fatal(err)
		}
	}
}
