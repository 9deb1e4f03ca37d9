// Package inputfile opens the files the job did not write (settlement
// files, the config, workbooks brought back for import): regular files
// only, refused before they are opened when they are anything else, so a
// named pipe, a device or a directory fails the command instead of
// hanging it, and read whole only up to a bound.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Open opens a regular file, following a symbolic link, and refuses
// anything else; what names the file in errors ("settlement file",
// "config"). It looks before opening (opening a named pipe for reading
// blocks until a writer appears) and again after (the path may have been
// replaced in between).
func Open(path, what string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, statError(path, what, err)
	}
	if err := checkRegular(path, what, st.Mode()); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, statError(path, what, err)
	}
	if st, err = f.Stat(); err == nil {
		err = checkRegular(path, what, st.Mode())
	} else {
		err = statError(path, what, err)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads a regular file whole, as Open opens it, refusing one of
// more than limit bytes before reading it.
func ReadFile(path, what string, limit int64) ([]byte, error) {
	f, err := Open(path, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > limit {
		return nil, fmt.Errorf("%s %s: %d bytes, more than the %d a %s may have", what, path, st.Size(), limit, what)
	}
	// The size may grow while it is read: read one byte past the limit
	// to know.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s %s: more than the %d bytes a %s may have", what, path, limit, what)
	}
	return b, nil
}

func statError(path, what string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("%s %s: symbolic link loop: %w", what, path, err)
	}
	return fmt.Errorf("%s %s: %w", what, path, err)
}

func checkRegular(path, what string, m fs.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	kind := "not a regular file (mode " + m.String() + ")"
	switch {
	case m.IsDir():
		kind = "a directory, not a regular file"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe, not a regular file"
	case m&fs.ModeSocket != 0:
		kind = "a socket, not a regular file"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		kind = "a device, not a regular file"
	}
	return fmt.Errorf("%s %s is %s", what, path, kind)
}
