// Package atomicfile is the job's one way to write a file: through a
// temporary sibling and a rename, so that a reader never sees a half-written
// file under its final name and a crash leaves the previous version (or
// nothing) in place. The temporaries a crash left behind are removed by a
// later write.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"reconcile"
)

// StaleAfter is how long a temporary file of this writer lies untouched
// before a later write in its directory removes it as the leftover of a
// crash (kill -9, a power cut, the machine lost mid-download): without
// that, each crash during a download would leave up to a file's worth of
// disk (16 GiB) for ever. It is well past any write: a download, its
// check included, runs under its timeout, which the config holds to at
// most 12 hours; a report is written in minutes.
const StaleAfter = 24 * time.Hour

// tempMark sits between a temporary file's final name and the random
// digits that make it unique: ".NAME.tmp-123456789".
const tempMark = ".tmp-"

// Write writes the file at path through a temporary sibling: write fills
// it (and may read it back to check it); only when write returns nil is it
// renamed into place, with mode perm. On any error the sibling is removed
// and whatever was at path stays as it was. The temporaries of earlier
// writes in the directory that a crash left behind, untouched for
// StaleAfter, are removed first.
func Write(path string, perm os.FileMode, write func(f *os.File) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	removeStale(dir, time.Now())
	tmp, err := os.CreateTemp(dir, "."+base+tempMark+"*")
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

// removeStale removes the temporaries of this writer in dir (hidden,
// ".NAME.tmp-<digits>", regular files) untouched for StaleAfter: the
// leftovers of writes a crash cut short. Anything else is left alone.
func removeStale(dir string, now time.Time) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !isTemp(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < StaleAfter {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

// isTemp reports whether name is one of this writer's temporaries:
// "." and a name, then ".tmp-" and digits (os.CreateTemp's random part).
func isTemp(name string) bool {
	i := strings.LastIndex(name, tempMark)
	if len(name) < 2 || name[0] != '.' || i < 2 {
		return false
	}
	digits := name[i+len(tempMark):]
	if digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
