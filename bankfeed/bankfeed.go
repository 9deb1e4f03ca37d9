// Package bankfeed reads the statements of the bank accounts the channels
// pay out to: ISO 20022 camt.053 (camt053.go), SWIFT MT940 (mt940.go) and
// BAI2 (bai2.go). Each reader streams a file's entries to a callback and
// returns its statements with what their entries added up to; a statement
// whose balances or control totals do not add up, and any entry the
// reader cannot take whole, stop the read with the file, the line (and for
// camt.053 the element's path) and the field named. The readers are
// written from the published standards and from the files banks write,
// which differ from them (each file's comment says how).
package bankfeed

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"

	"reconcile"
	"reconcile/inputfile"
)

// Options says what every reader needs besides the file.
type Options struct {
	// Name is the file's name in errors.
	Name string
}

// errorf builds the error every reader returns for a bad file: field
// names the field (camt.053: the element's path, MT940: the tag, BAI2:
// the record and field).
func (o Options) errorf(line int, field, format string, args ...any) error {
	return &reconcile.ParseError{File: o.Name, Line: line, Column: field, Err: fmt.Errorf(format, args...)}
}

func (o Options) wrap(line int, field string, err error) error {
	return &reconcile.ParseError{File: o.Name, Line: line, Column: field, Err: err}
}

// A Reader reads one statement file: each entry is handed to fn as it is
// read (fn's error stops the read and is returned), and the file's
// statements are returned once the whole file has been read and every
// total checked. An error means the file is refused whole: the caller
// keeps nothing fn was given.
type Reader func(r io.Reader, o Options, fn func(reconcile.BankEntry) error) ([]reconcile.BankStatement, error)

var readers = map[string]Reader{
	"bai2":    readBAI2,
	"camt053": readCamt053,
	"mt940":   readMT940,
}

// Formats lists the statement formats by name.
func Formats() []string {
	out := make([]string, 0, len(readers))
	for name := range readers {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the reader of a statement format; an unknown name is an
// error wrapping reconcile.ErrUnknownFormat that lists the known ones.
func Lookup(format string) (Reader, error) {
	r, ok := readers[format]
	if !ok {
		return nil, fmt.Errorf("%w %s: the bank statement formats are %s", reconcile.ErrUnknownFormat,
			reconcile.Quote(format), strings.Join(Formats(), ", "))
	}
	return r, nil
}

// maxText bounds one text value of an entry (a name, a reference, a line
// of remittance text): the standards allow at most 140 characters to a
// remittance line and 35 to a reference; a longer value is a broken file.
const maxText = 4 << 10

// maxRemittance bounds an entry's remittance text once its lines are
// joined.
const maxRemittance = 64 << 10

// checkText refuses a value the job cannot store or show: longer than
// max, not UTF-8, with a NUL or another control character.
func checkText(s string, max int) string {
	if len(s) > max {
		return fmt.Sprintf("%d bytes, longer than the %d the job takes", len(s), max)
	}
	if f := reconcile.TextFault(s); f != "" {
		return f
	}
	for _, r := range s {
		if unicode.IsControl(r) { // C0, DEL and C1 (U+0085 NEL, …)
			return fmt.Sprintf("control character %U", r)
		}
	}
	return ""
}

// ReadFile reads the statement file at path, opened as every file the job
// did not write is (inputfile.Open), with format's reader, hashing its
// bytes as they are read: the hex SHA-256 names the file the entries came
// from. o.Name defaults to path; a nil fn only validates.
func ReadFile(path, format string, o Options, fn func(reconcile.BankEntry) error) (stmts []reconcile.BankStatement, sha string, err error) {
	read, err := Lookup(format)
	if err != nil {
		return nil, "", err
	}
	f, err := inputfile.Open(path, "bank statement")
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if o.Name == "" {
		o.Name = path
	}
	if fn == nil { // only validates
		fn = func(reconcile.BankEntry) error { return nil }
	}
	// A payout's arrivals are summed across nights: no file's entries may
	// add up, in one currency, past what leaves room for that.
	var totals reconcile.FileTotals
	h := sha256.New()
	stmts, err = read(io.TeeReader(f, h), o, func(e reconcile.BankEntry) error {
		if !totals.Add(e.Currency, e.Amount) {
			return o.errorf(e.Line, "", "the file's entries in %s add up past %s minor units at this entry: %w",
				reconcile.Quote(e.Currency), reconcile.FormatDecimal(reconcile.MaxFileTotal, 0), reconcile.ErrAmountRange)
		}
		return fn(e)
	})
	if err != nil {
		return nil, "", err
	}
	// A reader stops at the end of what it reads: the rest counts too.
	if _, err := io.Copy(h, f); err != nil {
		return nil, "", fmt.Errorf("read %s: %w", path, err)
	}
	return stmts, hex.EncodeToString(h.Sum(nil)), nil
}
