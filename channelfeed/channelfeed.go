// Package channelfeed reads channel settlement files into canonical transactions.
//
// Each format has a Parser, found by name with Lookup: "csv" is the
// project's canonical CSV, "wechatpay" the WeChat Pay trade bill.
// ParseFile reads a file from disk and fingerprints it in the same pass.
package channelfeed

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/maphash"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"reconcile"
	"reconcile/inputfile"
)

// Parser reads one settlement format.
type Parser interface {
	// Parse reads r and calls emit for each row, in file order. Every error
	// is a *reconcile.ParseError naming opts.Name, the 1-based line and the
	// column (header name) where there is one, except that emit's error
	// stops parsing and is returned as is, and so is ctx's error.
	//
	// Rows are emitted while the file is read, but a file's own control
	// totals can only be checked at its end: when Parse returns an error,
	// the caller must discard every row it was given.
	Parse(ctx context.Context, r io.Reader, opts Options, emit func(reconcile.Transaction) error) error
}

// Options are the settings of one Parse call.
type Options struct {
	Name string // file name used in errors
	// Location is the business time zone: times without a zone in the
	// file are read in it. Nil means UTC.
	Location *time.Location
	// OrderKey and RefundKey name the Stripe metadata keys holding our
	// order and refund numbers (defaults order_id, merchant_refund_id).
	OrderKey, RefundKey string
	// Mapping describes the columns of a "mapped" CSV; that format needs it.
	Mapping *Mapping
	// Payouts, when set, is given each payout the file tells of (its
	// rows' net summed, checked against the payout's own row where the
	// file has one), once the whole file has been read and checked: a
	// file refused gives none. Its error stops the parse.
	Payouts func(reconcile.Payout) error
	// Earliest and Latest bound the time of every row: a row before
	// Earliest or after Latest stops the file (a zero bound is not
	// checked). A settlement file of day D holds rows of about D.
	Earliest, Latest time.Time
	// Fingerprinted is what Fingerprint said of the file, or nil. When
	// set, ParseFile checks that it reads the same bytes with a hash
	// keyed by a secret of the process, several times faster than
	// SHA-256, instead of taking the SHA-256 again, and refuses a file
	// that changed since (ErrFileChanged).
	Fingerprinted *FileInfo

	// slabs, when set, holds the text of the rows read (see textSlabs).
	slabs *textSlabs
}

func (o Options) location() *time.Location {
	if o.Location == nil {
		return time.UTC
	}
	return o.Location
}

// errorf builds the error every parser returns for a bad file.
func (o Options) errorf(line int, column, format string, args ...any) error {
	return &reconcile.ParseError{File: o.Name, Line: line, Column: column, Err: fmt.Errorf(format, args...)}
}

func (o Options) wrap(line int, column string, err error) error {
	return &reconcile.ParseError{File: o.Name, Line: line, Column: column, Err: err}
}

var parsers = map[string]Parser{
	"adyen":     adyenParser{},
	"alipay":    alipayParser{},
	"csv":       csvParser{},
	"mapped":    mappedParser{},
	"stripe":    stripeParser{},
	"wechatpay": wechatPayParser{},
}

// Lookup returns the parser of a format name. An unknown name is an error
// wrapping reconcile.ErrUnknownFormat that lists the known ones. Every
// parser puts its rows through a rowSink, which checks what every format
// must hold.
func Lookup(format string) (Parser, error) {
	p, ok := parsers[format]
	if !ok {
		return nil, fmt.Errorf("%w %s (known formats: %s)", reconcile.ErrUnknownFormat, reconcile.Quote(format), strings.Join(Formats(), ", "))
	}
	return p, nil
}

// Formats returns the known format names, sorted.
func Formats() []string {
	return slices.Sorted(maps.Keys(parsers))
}

// ForeignPaymentIDs reports whether a format's payment rows carry a
// channel id other than the one a merchant's records keep of the
// payment: Stripe's rows are balance transactions (txn_…), where our
// records keep the payment intent or the charge. The others carry the
// payment's own id (WeChat Pay 微信订单号, Alipay 支付宝交易号, Adyen's
// Modification Reference, a CSV's channel_txn_id).
func ForeignPaymentIDs(format string) bool { return format == "stripe" }

// FileInfo describes a parsed file.
type FileInfo struct {
	Path   string
	SHA256 string // hex of the file's bytes
	Bytes  int64
	Rows   int // rows emitted; for Fingerprint, the lines of the file
	// keyed is the hash of the file's bytes keyed by fileSeed, for
	// Options.Fingerprinted; 0 from ParseFile.
	keyed uint64
}

// ErrFileChanged is the error of a file whose bytes are not those it had
// when it was fingerprinted: a file still being written, or replaced.
var ErrFileChanged = errors.New("changed while it was being read: run again once it is complete")

// fileSeed keys the hash that checks a file is read as it was
// fingerprinted: secret to the process, so no file can be made to
// collide with another under it.
var fileSeed = maphash.MakeSeed()

// ParseFile parses the file at path with format and returns what was read.
// opts.Name defaults to path. A gzip file (WeChat Pay's tar_type=GZIP) is
// decompressed on the fly; a ZIP archive (Alipay's download) is opened and
// its settlement entry parsed, see zipEntry. A symbolic link is
// followed; anything but a regular file (a directory, a device, a named
// pipe) is refused before it is opened. The hash is taken of the bytes as
// they are parsed, so it identifies the file the rows came from even if
// the file is replaced afterwards. A nil emit only validates. Every row
// is held to opts.Earliest and opts.Latest (see rowSink). On error the
// FileInfo is zero; errors of Parse are returned as they are.
func ParseFile(ctx context.Context, path, format string, opts Options, emit func(reconcile.Transaction) error) (FileInfo, error) {
	p, err := Lookup(format)
	if err != nil {
		return FileInfo{}, err
	}
	f, err := openRegular(path)
	if err != nil {
		return FileInfo{}, err
	}
	defer f.Close()

	if opts.Name == "" {
		opts.Name = path
	}
	h := newFileHash(opts.Fingerprinted)
	n := &countWriter{w: h.h}
	tee := io.TeeReader(f, n)
	info := FileInfo{Path: path}

	var in io.Reader = tee
	br := bufio.NewReader(tee)
	magic, _ := br.Peek(4)
	outer := archiveOf(magic)
	switch outer {
	case "gzip":
		zr, err := gzip.NewReader(br)
		if err != nil {
			return FileInfo{}, opts.errorf(0, "", "gzip: %v", err)
		}
		defer zr.Close()
		in = zr
	case "ZIP":
		// An archive is read by random access: hash it whole first.
		if _, err := io.Copy(io.Discard, br); err != nil {
			return FileInfo{}, fmt.Errorf("read settlement file %s: %w", path, err)
		}
		rc, name, err := zipEntry(f, n.n, opts.Name)
		if err != nil {
			return FileInfo{}, err
		}
		defer rc.Close()
		opts.Name = path + ":" + name
		in = rc
	default:
		in = br
	}
	if outer != "" {
		// One level is unpacked: a second would read as binary text.
		inner := bufio.NewReader(in)
		magic, _ := inner.Peek(4)
		if kind := archiveOf(magic); kind != "" {
			return FileInfo{}, opts.errorf(0, "", "a %s archive inside the %s archive, not a settlement file: unpack it first", kind, outer)
		}
		in = inner
	}
	err = p.Parse(ctx, in, opts, counted(opts, &info.Rows, emit))
	if err != nil {
		return FileInfo{}, err
	}
	// Parsers read to the end, but the hash must cover the whole file
	// whatever a parser does, so drain what is left.
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return FileInfo{}, fmt.Errorf("read settlement file %s: %w", path, err)
	}
	info.Bytes = n.n
	if info.SHA256, err = h.sum(path, info.Bytes); err != nil {
		return FileInfo{}, err
	}
	return info, nil
}

// counted is emit for ParseFile: each row counted in rows and in its
// currency's total, a row that takes the total past the bound refused.
func counted(opts Options, rows *int, emit func(reconcile.Transaction) error) func(reconcile.Transaction) error {
	var totals reconcile.FileTotals
	return func(t reconcile.Transaction) error {
		if !totals.Add(t.Currency, rowSize(&t)) {
			return opts.errorf(t.Line, "", "the file's amounts and fees in %s add up past %s minor units at this row: %w",
				reconcile.Quote(t.Currency), reconcile.FormatDecimal(reconcile.MaxFileTotal, 0), reconcile.ErrAmountRange)
		}
		if emit != nil {
			if err := emit(t); err != nil {
				return err
			}
		}
		*rows++
		return nil
	}
}

// rowSize is what a row adds to its currency's total in the file
// (reconcile.FileTotals): its amount and its fee by size, in minor units,
// the fee's fraction rounded up; negative where that sum wraps, which
// the totals refuse. Amounts and fees are never math.MinInt64
// (absAmount), so every sum the night makes of the file's rows is
// bounded by it.
func rowSize(t *reconcile.Transaction) int64 {
	fee := absAmount(t.FeeMilli)
	v := absAmount(t.Amount) + fee/1000
	if fee%1000 != 0 {
		v++
	}
	return v
}

// fileHash hashes a file's bytes as ParseFile reads them: with SHA-256,
// or, for a file fingerprinted before, with the keyed hash that checks it
// is the same file.
type fileHash struct {
	fp    *FileInfo
	h     hash.Hash
	keyed *maphash.Hash // h, when fp is set
}

func newFileHash(fp *FileInfo) *fileHash {
	if fp == nil {
		return &fileHash{h: sha256.New()}
	}
	keyed := &maphash.Hash{}
	keyed.SetSeed(fileSeed)
	return &fileHash{fp: fp, h: keyed, keyed: keyed}
}

// sum is the file's SHA-256 in hex, or ErrFileChanged when its bytes are
// not those fingerprinted.
func (h *fileHash) sum(path string, bytes int64) (string, error) {
	if h.fp == nil {
		return hex.EncodeToString(h.h.Sum(nil)), nil
	}
	if bytes != h.fp.Bytes || h.keyed.Sum64() != h.fp.keyed {
		return "", fmt.Errorf("settlement file %s: %w", path, ErrFileChanged)
	}
	return h.fp.SHA256, nil
}

// archiveOf names the archive a file's first four bytes announce, "" for
// none.
func archiveOf(magic []byte) string {
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		return "gzip"
	case bytes.Equal(magic, []byte("PK\x03\x04")):
		return "ZIP"
	}
	return ""
}

// openRegular opens a settlement file as every file the job did not
// write is opened (inputfile.Open): a regular file, following a symbolic
// link; anything else is refused before it is opened, since opening a
// named pipe blocks until a writer appears.
func openRegular(path string) (*os.File, error) {
	return inputfile.Open(path, "settlement file")
}

// Fingerprint returns the hex SHA-256 of the file at path, refusing what
// ParseFile refuses, with its size and line count (before any
// decompression: a hint of the rows to expect, not a promise). A run is
// keyed by the hash: the same file again is the same run.
func Fingerprint(path string) (FileInfo, error) {
	f, err := openRegular(path)
	if err != nil {
		return FileInfo{}, err
	}
	defer f.Close()
	// SHA-256 is most of the work: it takes each chunk on a goroutine of
	// its own while the next is read, counted and hashed with the key.
	h := sha256.New()
	chunks, free := make(chan []byte, 2), make(chan []byte, 3)
	for range cap(free) {
		free <- make([]byte, 1<<20)
	}
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		for c := range chunks {
			h.Write(c)
			free <- c[:cap(c)]
		}
	}()
	var keyed maphash.Hash
	keyed.SetSeed(fileSeed)
	info := FileInfo{Path: path}
	var readErr error
	for {
		buf := <-free
		n, err := f.Read(buf)
		keyed.Write(buf[:n])
		info.Bytes += int64(n)
		info.Rows += bytes.Count(buf[:n], []byte{'\n'})
		chunks <- buf[:n]
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
	}
	close(chunks)
	<-hashed
	if readErr != nil {
		return FileInfo{}, fmt.Errorf("read settlement file %s: %w", path, readErr)
	}
	info.SHA256 = hex.EncodeToString(h.Sum(nil))
	info.keyed = keyed.Sum64()
	return info, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// openText starts the parse of a UTF-8 text file: the sink of its rows
// (see newRowSink), and the file readied for reading, a byte-order mark
// skipped and an empty file refused as such.
func openText(ctx context.Context, r io.Reader, opts Options, emit func(reconcile.Transaction) error) (*bufio.Reader, rowSink, error) {
	rows, err := newRowSink(ctx, opts, emit)
	if err != nil {
		return nil, rows, err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if err := startText(br, opts); err != nil {
		return nil, rows, err
	}
	return br, rows, nil
}

// startText skips the byte-order mark of br, text read as UTF-8, and
// refuses an empty file as such.
func startText(br *bufio.Reader, opts Options) error {
	empty, err := skipBOM(br)
	if err != nil {
		return opts.wrap(0, "", fmt.Errorf("read: %w", err))
	}
	if empty {
		return opts.errorf(0, "", "empty file")
	}
	return nil
}

// errEmptyAmount is the error of an empty amount or fee.
var errEmptyAmount = errors.New("empty amount")

// parseMoney reads s, a plain decimal in major units such as "99.80", as
// an integer scaled by 10^scale: minor units of a currency of scale
// decimals, or thousandths of them for a fee (scale the currency's
// decimals + 3). Settlement files state direction by row kind, so an
// amount is unsigned and a sign is refused outright: it means the wrong
// column was mapped. signed takes one: Stripe and Alipay write direction
// as the sign of the amount, and a fee returned is negative. It is the
// general reader, which alone decides what is an error: columns.money
// tries the fast path (see fastpath.go) first.
func parseMoney(s string, scale int, signed bool) (int64, error) {
	switch {
	case s == "":
		return 0, errEmptyAmount
	case !signed && (s[0] == '-' || s[0] == '+'):
		return 0, fmt.Errorf("%s: amount must be an unsigned plain decimal", reconcile.Quote(s))
	}
	return reconcile.ParseDecimal(s, scale)
}

// absAmount is v without its sign; v is an amount columns.money or
// parseMoney (or the mapped parser's number) read, which is never
// math.MinInt64, so the negation cannot overflow.
func absAmount(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// toMilli scales minor units to thousandths of one, as fees are given,
// reporting false on overflow.
func toMilli(v int64) (int64, bool) {
	if v > math.MaxInt64/1000 || v < -math.MaxInt64/1000 {
		return 0, false
	}
	return v * 1000, true
}
