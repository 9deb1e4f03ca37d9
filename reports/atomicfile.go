package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"reconcile"
)

// writeFileAtomic writes a file through a temporary sibling and a rename, so
// a reader (or the Slack upload) never sees a half-written file and a crash
// leaves the previous version in place.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// CreateTemp makes the file private; the outputs are meant to be read by
	// whoever reads the output directory.
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The rename is durable once the directory is: a crash right after
	// must not bring the old file back.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// WriteFile writes b to the file name in dir, atomically and readable by
// all (0644), creating dir when it is missing. name is a file name, never
// a path: one that names another directory ("../x", "a/b", "") or starts
// with '.' is refused, so a name that came from data cannot leave dir.
func WriteFile(dir, name string, b []byte) error {
	if name == "" || name[0] == '.' || name != filepath.Base(name) || !filepath.IsLocal(name) {
		return fmt.Errorf("write %s: %s is not a plain file name", dir, reconcile.Quote(name))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	return writeFileAtomic(filepath.Join(dir, name), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
