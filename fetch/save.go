package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"reconcile/atomicfile"
	"reconcile/inputfile"
)

// Saved says what Save did.
type Saved struct {
	Path    string
	Bytes   int64
	SHA256  string // hex, of the file now at Path
	Changed bool   // false: Path already held these bytes, nothing was written
	// Replaced is true when Path held other bytes before: the channel
	// corrected its file.
	Replaced bool
}

// DefaultLimit is the largest file Save takes: a busy merchant's day is a
// few GiB at most, and a stream without end must not fill the disk.
const DefaultLimit = 16 << 30

// ErrBadFile is a download the job refuses for its content: not the size
// or hash the channel stated, empty, too large, or not a file the
// channel's parser reads. Asking again the same way gets the same file.
var ErrBadFile = errors.New("the file the channel handed out is refused")

// Save puts the file of offer at path. The download goes to a temporary
// file beside path; it is checked (the stated size and digest, then check,
// the parser's look at it) and only then renamed into place, so a half
// download or a refused one never appears under path, and a crash leaves
// nothing a run would pick up. A path already holding the same bytes is
// left alone, and when the offer states a digest the same as the file's
// the download is not even made. A file replaced by other bytes (a bill
// the channel corrected) is kept beside it as NAME.superseded-<sha-256
// prefix>, the evidence of the run it was reconciled in. The directory is
// made when missing. limit 0 means DefaultLimit.
func Save(ctx context.Context, offer *Offer, path string, limit int64, check func(tmp string) error) (Saved, error) {
	out := Saved{Path: path}
	old, oldSum, err := present(path, offer.Digest)
	if err != nil {
		return out, err
	}
	if old != "" && offer.Digest != nil && bytes.Equal(oldSum, offer.Digest.Sum) {
		out.SHA256 = old
		st, err := os.Stat(path)
		if err == nil {
			out.Bytes = st.Size()
		}
		return out, nil
	}
	st, err := download(ctx, offer, filepath.Dir(path), filepath.Base(path), limit)
	if err != nil {
		return out, err
	}
	if st.SHA256 == old {
		// The same bytes: the parser's look is spared.
		st.Discard()
		out.Bytes, out.SHA256 = st.Bytes, st.SHA256
		return out, nil
	}
	if err := st.check(offer, check); err != nil {
		return out, err
	}
	return st.Place(path)
}

// Staged is a download checked and waiting under a hidden temporary name
// (the atomic writer's, so a crash's leftover is removed in time) for the
// place it belongs in: for a channel whose file's place is known from its
// content only, such as an Adyen batch filed under the date of its rows.
type Staged struct {
	temp   *atomicfile.Temp
	Bytes  int64
	SHA256 string // hex
}

// Stage downloads offer into a hidden temporary file in dir, named after
// name, and checks it as Save does: the stated size and digest, not empty,
// then check. Place then puts it where it belongs; Discard drops it. The
// directory is made when missing. limit 0 means DefaultLimit.
func Stage(ctx context.Context, offer *Offer, dir, name string, limit int64, check func(tmp string) error) (*Staged, error) {
	st, err := download(ctx, offer, dir, name, limit)
	if err != nil {
		return nil, err
	}
	if err := st.check(offer, check); err != nil {
		return nil, err
	}
	return st, nil
}

// Path is where the staged file is until it is placed, to read it.
func (s *Staged) Path() string { return s.temp.Name() }

// Place puts the staged file at path, which is in the directory it was
// staged in. A path holding the same bytes is left alone (Changed false);
// one holding other bytes is kept beside it as NAME.superseded-<sha-256
// prefix>, whoever put it there, and Replaced says so.
func (s *Staged) Place(path string) (Saved, error) {
	c, err := s.temp.Commit(path, 0o640, true)
	if err != nil {
		return Saved{Path: path}, err
	}
	return Saved{Path: path, Bytes: s.Bytes, SHA256: s.SHA256, Changed: !c.Unchanged, Replaced: c.Kept != ""}, nil
}

// Discard removes the staged file; after Place it does nothing.
func (s *Staged) Discard() { s.temp.Discard() }

// download copies offer into a temporary file in dir, checked against what
// the channel stated.
func download(ctx context.Context, offer *Offer, dir, name string, limit int64) (*Staged, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	if offer.Size > limit {
		return nil, fmt.Errorf("%s: the channel states %d bytes, more than the %d this job takes: %w", offer.Name, offer.Size, limit, ErrBadFile)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	body, err := offer.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	tmp, err := atomicfile.Create(dir, name)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", offer.Name, err)
	}
	st := &Staged{temp: tmp}
	st.Bytes, st.SHA256, err = copyStated(tmp, body, offer, limit)
	if err != nil {
		tmp.Discard()
		return nil, err
	}
	return st, nil
}

// check runs the caller's check on the staged file, which reads it by its
// name; the file is synced when it is placed, once.
func (s *Staged) check(offer *Offer, check func(tmp string) error) error {
	if check == nil {
		return nil
	}
	if err := check(s.Path()); err != nil {
		s.Discard()
		return fmt.Errorf("download %s: %w: %w", offer.Name, ErrBadFile, err)
	}
	return nil
}

// copyStated copies the download to w, at most limit bytes, and checks it
// against what the channel stated: its size, its digest, not empty. It
// returns the bytes copied and their hex SHA-256.
func copyStated(w io.Writer, body io.Reader, offer *Offer, limit int64) (int64, string, error) {
	sum := sha256.New()
	var stated hash.Hash
	hashes := io.Writer(sum)
	if offer.Digest != nil {
		stated = offer.Digest.New()
		hashes = io.MultiWriter(sum, stated)
	}
	n, err := io.Copy(w, io.TeeReader(io.LimitReader(body, limit+1), hashes))
	if err != nil {
		return 0, "", fmt.Errorf("download %s: %w", offer.Name, cleanURL(err))
	}
	switch {
	case n > limit:
		return 0, "", fmt.Errorf("download %s: more than %d bytes: %w", offer.Name, limit, ErrBadFile)
	case offer.Size >= 0 && n != offer.Size:
		return 0, "", fmt.Errorf("download %s: %d bytes, the channel stated %d, cut short or padded: %w", offer.Name, n, offer.Size, ErrBadFile)
	case n == 0:
		return 0, "", fmt.Errorf("download %s: empty: %w", offer.Name, ErrBadFile)
	}
	if stated != nil {
		if got := stated.Sum(nil); !bytes.Equal(got, offer.Digest.Sum) {
			return 0, "", fmt.Errorf("download %s: %s %x, the channel stated %x: %w", offer.Name, offer.Digest.Name, got, offer.Digest.Sum, ErrBadFile)
		}
	}
	return n, hex.EncodeToString(sum.Sum(nil)), nil
}

// present returns the hex SHA-256 of the file at path, "" when there is
// none, and its sum under the offer's stated digest when there is one.
func present(path string, d *Digest) (sha string, stated []byte, err error) {
	f, err := inputfile.Open(path, "settlement file")
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	sum := sha256.New()
	w := io.Writer(sum)
	var h hash.Hash
	if d != nil {
		h = d.New()
		w = io.MultiWriter(sum, h)
	}
	if _, err := io.Copy(w, f); err != nil {
		return "", nil, fmt.Errorf("read %s: %w", path, err)
	}
	if h != nil {
		stated = h.Sum(nil)
	}
	return hex.EncodeToString(sum.Sum(nil)), stated, nil
}
