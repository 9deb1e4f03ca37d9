package atomicfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
