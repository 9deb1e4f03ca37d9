// Package atomicfile is the job's one way to write a file: through a
// temporary sibling and a rename, so that a reader never sees a half-written
// file under its final name and a crash leaves the previous version (or
// nothing) in place.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"

	"reconcile"
)

// Write writes the file at path through a temporary sibling: write fills
// it (and may read it back to check it); only when write returns nil is it
// renamed into place, with mode perm. On any error the sibling is removed
// and whatever was at path stays as it was.
func Write(path string, perm os.FileMode, write func(f *os.File) error) (err error) {
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
	// CreateTemp makes the file private; outputs are meant to be read by
	// whoever reads their directory.
	if err = tmp.Chmod(perm); err != nil {
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
	return Write(filepath.Join(dir, name), 0o644, func(w *os.File) error {
		_, err := w.Write(b)
		return err
	})
}
