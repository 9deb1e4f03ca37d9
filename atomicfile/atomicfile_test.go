package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile/atomicfile"
)

// TestWriteFile: a report is written whole, 0644, into its directory, and a
// name that would leave the directory is refused with nothing written.
func TestWriteFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out", "2026-11-28", "shop")
	if err := atomicfile.WriteFile(dir, "summary.json", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 || st.Size() != 3 {
		t.Errorf("summary.json: mode %v, %d bytes; want -rw-r--r--, 3", st.Mode().Perm(), st.Size())
	}
	for _, name := range []string{"", ".", "..", "../x.xlsx", "../../x.xlsx", "a/b.xlsx", "/etc/x"} {
		err := atomicfile.WriteFile(dir, name, []byte("x"))
		if err == nil || !strings.Contains(err.Error(), "not a plain file name") {
			t.Errorf("WriteFile(%q): got %v, want refused", name, err)
		}
	}
	var files []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Errorf("files under %s: %v, want summary.json alone", root, files)
	}
}

// TestWriteRemovesStaleTemporaries: the temporaries a crash left (a
// download killed with SIGKILL leaves its hidden .NAME.tmp-* file) are
// removed by the next write in their directory once untouched for a day;
// a temporary being written now, and every file that is not one of the
// writer's temporaries, are left alone.
func TestWriteRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-atomicfile.StaleAfter - time.Hour)
	files := map[string]bool{ // name: removed by the write
		".20261128_ALL.csv.tmp-3879461201":         true,  // a download killed a day ago
		".adyen-batch-412.tmp-12":                  true,  // a batch killed before it was filed
		".summary.json.tmp-77":                     true,  // a report
		".20261129_ALL.csv.tmp-1234567":            false, // being written now
		".20261127_ALL.csv.tmp-notdigits":          false, // not a name the writer makes
		"20261126_ALL.csv.tmp-123":                 false, // not hidden: not the writer's
		".tmp-123":                                 false, // no name before the mark
		".keep":                                    false,
		"20261128_ALL.csv":                         false,
		"20261128_ALL.csv.superseded-0123456789ab": false,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
		if name != ".20261129_ALL.csv.tmp-1234567" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A directory named like a temporary is not the writer's either.
	if err := os.Mkdir(filepath.Join(dir, ".x.tmp-5"), 0o750); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, ".x.tmp-5"), old, old)

	if err := atomicfile.WriteFile(dir, "summary.json", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	for name, removed := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := errors.Is(err, os.ErrNotExist); gone != removed {
			t.Errorf("%s: removed %v, want %v", name, gone, removed)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".x.tmp-5")); err != nil {
		t.Errorf("a directory named like a temporary: %v, want it left", err)
	}
}

// TestCommitKeepsReplaced: a file committed with keep over other bytes
// keeps the old ones beside it under their hash; over the same bytes it
// changes nothing; a destination outside the temporary's directory is
// refused with nothing left behind.
func TestCommitKeepsReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bill.csv")
	commit := func(b []byte, to string) (atomicfile.Committed, error) {
		t.Helper()
		tmp, err := atomicfile.Create(dir, "bill.csv")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tmp.Write(b); err != nil {
			t.Fatal(err)
		}
		return tmp.Commit(to, 0o640, true)
	}
	if c, err := commit([]byte("first\n"), path); err != nil || c.Kept != "" || c.Unchanged {
		t.Fatalf("first commit: got %+v, %v; want it written, nothing kept", c, err)
	}
	c, err := commit([]byte("second\n"), path)
	// sha256("first\n") begins b640e840b19d.
	want := path + ".superseded-" + "b640e840b19d"
	if err != nil || c.Kept != want {
		t.Fatalf("second commit: got %+v, %v; want the first kept as %s", c, err, want)
	}
	if b, _ := os.ReadFile(want); string(b) != "first\n" {
		t.Errorf("%s holds %q, want the first bytes", want, b)
	}
	if b, _ := os.ReadFile(path); string(b) != "second\n" {
		t.Errorf("%s holds %q, want the second bytes", path, b)
	}
	before, _ := os.Stat(path)
	if c, err := commit([]byte("second\n"), path); err != nil || !c.Unchanged || c.Kept != "" {
		t.Errorf("the same bytes again: got %+v, %v; want unchanged", c, err)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) {
		t.Error("the same bytes again replaced the file")
	}
	if _, err := commit([]byte("x"), filepath.Join(t.TempDir(), "bill.csv")); err == nil {
		t.Error("a destination in another directory: accepted, want refused")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("%s holds %d files, want the bill and the one it replaced, no temporary: %v", dir, len(ents), ents)
	}
}
