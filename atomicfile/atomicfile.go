// Package atomicfile is the job's one way to write a file: through a
// temporary sibling and a rename, so that a reader never sees a half-written
// file under its final name and a crash leaves the previous version (or
// nothing) in place. A file that replaces one the job must not lose (a
// settlement file a run was made of) keeps the old one beside it, and the
// temporaries a crash left behind are removed by a later write.
package atomicfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
// most 6 hours; a report is written in minutes.
const StaleAfter = 24 * time.Hour

// tempMark sits between a temporary file's final name and the random
// digits that make it unique: ".NAME.tmp-123456789".
const tempMark = ".tmp-"

// Temp is a file being written under a hidden temporary name in the
// directory of its destination, ".NAME.tmp-<digits>". Write through the
// embedded *os.File, then Commit or Discard it.
type Temp struct {
	*os.File
	dir  string
	done bool
}

// Create starts a file in dir that will be named base (or that a name
// like base describes, when its final name is known only once it is
// written). The temporaries of earlier writes in dir that a crash left
// behind, untouched for StaleAfter, are removed first.
func Create(dir, base string) (*Temp, error) {
	if dir == "" {
		dir = "."
	}
	RemoveStale(dir)
	f, err := os.CreateTemp(dir, "."+base+tempMark+"*")
	if err != nil {
		return nil, err
	}
	return &Temp{File: f, dir: filepath.Clean(dir)}, nil
}

// Committed says what Commit did.
type Committed struct {
	// Unchanged is true when path already held the same bytes (only
	// looked at when the replaced file is kept): nothing was renamed.
	Unchanged bool
	// Kept is the name the file replaced is kept under, "" when none was
	// (or when it was not asked to be kept).
	Kept string
}

// Commit puts the temporary file in place as path, which must be in its
// directory, with mode perm: synced, renamed, and the directory synced.
// With keep, a file at path holding other bytes is first kept beside it
// as SupersededName (a hard link: the old bytes stay whatever the rename
// does), and a file holding the same bytes is left as it is. On any
// error, the temporary file is removed and path stays as it was.
func (t *Temp) Commit(path string, perm os.FileMode, keep bool) (c Committed, err error) {
	if t.done {
		return c, fmt.Errorf("write %s: the temporary file was committed or discarded already", path)
	}
	defer func() {
		if err != nil {
			t.Discard()
		}
	}()
	if filepath.Dir(filepath.Clean(path)) != t.dir {
		return c, fmt.Errorf("write %s: not in %s, the directory its temporary file is in", path, t.dir)
	}
	// CreateTemp makes the file private; outputs are meant to be read by
	// whoever reads their directory.
	if err = t.Chmod(perm); err != nil {
		return c, fmt.Errorf("write %s: %w", path, err)
	}
	if err = t.Sync(); err != nil {
		return c, fmt.Errorf("write %s: %w", path, err)
	}
	if err = t.Close(); err != nil {
		return c, fmt.Errorf("write %s: %w", path, err)
	}
	if keep {
		if c, err = keepReplaced(t.Name(), path); err != nil {
			return c, fmt.Errorf("write %s: %w", path, err)
		}
		if c.Unchanged {
			t.Discard()
			return c, nil
		}
	}
	if err = os.Rename(t.Name(), path); err != nil {
		return c, fmt.Errorf("write %s: %w", path, err)
	}
	t.done = true
	// The rename is durable once the directory is: a crash right after
	// must not bring the old file back.
	if d, err := os.Open(t.dir); err == nil {
		d.Sync()
		d.Close()
	}
	return c, nil
}

// Discard removes the temporary file; after Commit it does nothing.
func (t *Temp) Discard() {
	if t.done {
		return
	}
	t.done = true
	t.Close()
	os.Remove(t.Name())
}

// Write writes the file at path through a temporary sibling: write fills
// it (and may read it back to check it); only when write returns nil is it
// renamed into place, with mode perm. On any error the sibling is removed
// and whatever was at path stays as it was. A file replaced is not kept:
// Write is for what the job makes again at will (its reports).
func Write(path string, perm os.FileMode, write func(f *os.File) error) error {
	t, err := Create(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(t.File); err != nil {
		t.Discard()
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = t.Commit(path, perm, false)
	return err
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

// SupersededName is the name a file replaced at path is kept under: path
// and the first 12 hex digits of the replaced bytes' SHA-256, so the
// copies of one path never overwrite each other.
func SupersededName(path, sha256Hex string) string {
	return path + ".superseded-" + sha256Hex[:12]
}

// keepReplaced keeps the file at path, which the file at fresh is about to
// replace, as SupersededName; it reports Unchanged when both hold the same
// bytes. Nothing at path: nothing to keep.
func keepReplaced(fresh, path string) (Committed, error) {
	old, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Committed{}, nil
	}
	if err != nil {
		return Committed{}, err
	}
	defer old.Close()
	st, err := old.Stat()
	if err != nil {
		return Committed{}, err
	}
	if !st.Mode().IsRegular() {
		return Committed{}, fmt.Errorf("%s is a %s, not a file: left as it is", path, kind(st.Mode()))
	}
	oldSum, err := sum(old)
	if err != nil {
		return Committed{}, fmt.Errorf("read %s: %w", path, err)
	}
	if fi, err := os.Stat(fresh); err == nil && fi.Size() == st.Size() {
		f, err := os.Open(fresh)
		if err != nil {
			return Committed{}, err
		}
		freshSum, err := sum(f)
		f.Close()
		if err != nil {
			return Committed{}, fmt.Errorf("read %s: %w", fresh, err)
		}
		if freshSum == oldSum {
			return Committed{Unchanged: true}, nil
		}
	}
	kept := SupersededName(path, oldSum)
	switch err := os.Link(path, kept); {
	case errors.Is(err, fs.ErrExist):
		// Kept already, by an earlier replacement or another replica: its
		// name is its hash.
		return Committed{Kept: kept}, nil
	case err != nil:
		return Committed{}, fmt.Errorf("keep the file being replaced as %s: %w", kept, err)
	}
	// The link is made by name: had path been replaced since it was read,
	// the copy would hold other bytes than its name says.
	if lst, err := os.Stat(kept); err != nil || !os.SameFile(st, lst) {
		os.Remove(kept)
		return Committed{}, fmt.Errorf("%s changed while it was being replaced: try again", path)
	}
	return Committed{Kept: kept}, nil
}

// sum is the hex SHA-256 of what r holds.
func sum(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// RemoveStale removes the temporaries of this writer in dir (hidden,
// ".NAME.tmp-<digits>", regular files) untouched for StaleAfter: the
// leftovers of writes a crash cut short. Anything else is left alone.
// Every write does it in its directory first; a directory no write goes
// to again (a date's, once its file is there) is swept by whoever looks
// at it.
func RemoveStale(dir string) {
	now := time.Now()
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
