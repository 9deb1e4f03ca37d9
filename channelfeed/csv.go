package channelfeed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"reconcile"
)

// csvParser reads the project's canonical CSV: a header row and columns
// found by name, in any order, with unknown columns ignored.
type csvParser struct {
	// viaEncodingCSV reads every line with encoding/csv: the reference
	// the fast line reader is checked against.
	viaEncodingCSV bool
}

var _ Parser = csvParser{}

// Canonical column names; the first csvRequired of them must be present.
var csvColumns = [...]string{"type", "order_no", "refund_no", "channel_txn_id", "amount", "currency", "occurred_at", "fee", "status"}

const csvRequired = 7

const (
	csvType = iota
	csvOrderNo
	csvRefundNo
	csvChannelTxnID
	csvAmount
	csvCurrency
	csvOccurredAt
	csvFee
	csvStatus
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// skipBOM drops a leading UTF-8 byte order mark and reports whether
// anything follows it.
func skipBOM(br *bufio.Reader) (empty bool, err error) {
	b, err := br.Peek(len(utf8BOM))
	if bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	} else if err != nil && err != io.EOF {
		return false, err
	}
	if _, err := br.Peek(1); err != nil {
		if err == io.EOF {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

func (p csvParser) Parse(ctx context.Context, r io.Reader, opts Options, emit func(reconcile.Transaction) error) error {
	if emit == nil {
		emit = discard
	}
	br, err := openText(ctx, r, opts)
	if err != nil {
		return err
	}

	records := &csvRecords{br: br, opts: opts}
	if p.viaEncodingCSV {
		records.cr = newCSVReader(br, opts, 1)
	}
	return parseCSV(ctx, records, opts, emit)
}

func parseCSV(ctx context.Context, records *csvRecords, opts Options, emit func(reconcile.Transaction) error) error {
	rec, headerLine, _, err := records.read()
	if err == io.EOF {
		return opts.errorf(0, "", "empty file: no header row")
	}
	if err != nil {
		return csvReadError(opts, 1, err)
	}
	if err := opts.checkHeader(headerLine, rec); err != nil {
		return err
	}
	// The record slice is reused: the header's strings must be copied
	// out before the next read overwrites it.
	header := make([]string, len(rec))
	var idx [len(csvColumns)]int
	for i := range idx {
		idx[i] = -1
	}
	for i, h := range rec {
		h = strings.TrimSpace(h)
		header[i] = h
		for c, name := range csvColumns {
			if strings.EqualFold(h, name) {
				if idx[c] >= 0 {
					return opts.errorf(headerLine, h, "duplicate column (fields %d and %d)", idx[c]+1, i+1)
				}
				idx[c] = i
			}
		}
	}
	for c := range csvRequired {
		if idx[c] < 0 {
			return opts.errorf(headerLine, csvColumns[c], "missing required column (%s)", describeHeader(header, ','))
		}
	}

	row := csvRow{opts: opts, loc: opts.location(), header: header, idx: idx}
	for n := 1; ; n++ {
		rec, line, valid, err := records.read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvReadError(opts, 0, err)
		}
		if len(rec) != len(header) {
			return opts.errorf(line, "", "row has %d fields, header has %d", len(rec), len(header))
		}
		if !valid {
			if err := opts.checkRow(line, rec, header); err != nil {
				return err
			}
		}
		t, err := row.parse(rec, line)
		if err != nil {
			return err
		}
		if err := emit(t); err != nil {
			return err
		}
		if n%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}

// csvRecords reads the records of a canonical CSV. A line without a quote
// character is a record of its own, and its fields are the line cut at
// commas: reading it directly spares encoding/csv's byte-by-byte field
// machinery, a third of the time of a large file. At the first line with
// a quote (or one longer than the buffer, or a read error) the rest of
// the file goes to encoding/csv, so quoting, line counting and errors
// stay its own; the lines before are ones it reads the same way, held to
// the rules of lines.go as its lineGuard holds them.
type csvRecords struct {
	br   *bufio.Reader
	opts Options
	rec  []string // reused by every record
	// line is the number of lines read before cr took over, counted as
	// encoding/csv counts them: blank lines too.
	line int
	cr   *csv.Reader // nil until a line needs it
}

// read returns the next record, the line it starts on and whether its
// fields are known to be text reconcile.TextFault takes; io.EOF at the end.
func (r *csvRecords) read() (rec []string, line int, text bool, err error) {
	for r.cr == nil {
		b, err := r.br.ReadSlice('\n')
		if err == io.EOF && len(b) == 0 {
			return nil, 0, false, io.EOF
		}
		if (err != nil && err != io.EOF) || bytes.IndexByte(b, '"') >= 0 {
			r.handOver(b, err)
			break
		}
		r.line++
		// As encoding/csv: a line ends at \n or \r\n, the last line may
		// lack it or end in a lone \r, and a blank line is no record.
		if err == io.EOF {
			b = bytes.TrimSuffix(b, []byte{'\r'})
		} else {
			b = bytes.TrimSuffix(b[:len(b)-1], []byte{'\r'})
		}
		// The usual line is printable ASCII; any other is looked at for
		// a CR, which ends no line for encoding/csv, and for text
		// reconcile.TextFault refuses.
		text = printableASCII(b)
		if !text {
			if i := bytes.IndexByte(b, '\r'); i >= 0 {
				return nil, 0, false, r.opts.bareCR(r.line, i+1)
			}
			text = utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
		}
		if len(b) == 0 {
			continue
		}
		s := string(b) // the record's one allocation; fields share it
		rec = r.rec[:0]
		for {
			i := strings.IndexByte(s, ',')
			if i < 0 {
				break
			}
			rec = append(rec, s[:i])
			s = s[i+1:]
		}
		rec = append(rec, s)
		r.rec = rec
		// The fields join with ASCII commas into the line, so they are
		// valid UTF-8 without NUL exactly when it is.
		return rec, r.line, text, nil
	}
	rec, err = r.cr.Read()
	if err != nil {
		return rec, 0, false, shiftLines(err, r.line)
	}
	line, _ = r.cr.FieldPos(0)
	return rec, r.line + line, false, nil
}

// handOver passes reading to encoding/csv from the start of line b, which
// ReadSlice returned with err.
func (r *csvRecords) handOver(b []byte, err error) {
	rest := io.Reader(r.br)
	if err != nil && err != bufio.ErrBufferFull {
		rest = errReader{err}
	}
	r.cr = newCSVReader(bufio.NewReader(io.MultiReader(bytes.NewReader(bytes.Clone(b)), rest)), r.opts, r.line+1)
}

// newCSVReader reads the CSV of br, whose next byte starts line, through
// a lineGuard.
func newCSVReader(br *bufio.Reader, opts Options, line int) *csv.Reader {
	cr := csv.NewReader(newLineGuard(br, opts, line, line))
	cr.FieldsPerRecord = -1 // a ragged row gets our own error, with the line
	cr.ReuseRecord = true
	return cr
}

// shiftLines moves the lines of an encoding/csv error by n, for a reader
// that started n lines into the file.
func shiftLines(err error, n int) error {
	var pe *csv.ParseError
	if n == 0 || !errors.As(err, &pe) {
		return err
	}
	moved := *pe
	moved.StartLine += n
	moved.Line += n
	return &moved
}

// errReader returns err, as the file did after the bytes before it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// csvReadError is the error for what encoding/csv failed to read at line:
// a fault of the CSV, of a line (lineGuard's), or of the reading.
func csvReadError(opts Options, line int, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if pe.StartLine != pe.Line {
			// A quote left open makes the rest of the file one field.
			return opts.wrap(pe.Line, "", fmt.Errorf("%w (byte %d of the line; the record starts on line %d)", pe.Err, pe.Column, pe.StartLine))
		}
		return opts.wrap(pe.Line, "", fmt.Errorf("%w (byte %d of the line)", pe.Err, pe.Column))
	}
	if _, ok := errors.AsType[*reconcile.ParseError](err); ok {
		return err
	}
	return opts.wrap(line, "", fmt.Errorf("read: %w", err))
}

// describeHeader shows a header in an error about its columns, quoted
// and cut as every value from a file is. A header read as one field is
// usually a file separated by another character than delim: it says so.
func describeHeader(header []string, delim rune) string {
	s := "header: " + reconcile.Quote(strings.Join(header, string(delim)))
	if len(header) == 1 {
		for _, d := range []rune{',', ';', '\t', '|'} {
			if d != delim && strings.ContainsRune(header[0], d) {
				return s + fmt.Sprintf("; one field: is the file separated by %s, not %s?", reconcile.Quote(string(d)), reconcile.Quote(string(delim)))
			}
		}
	}
	return s
}

// csvRow turns one record of a canonical CSV into a transaction.
type csvRow struct {
	opts   Options
	loc    *time.Location
	header []string
	idx    [len(csvColumns)]int

	// A file rarely holds more than one currency: the last one seen and
	// its digits spare a map lookup per row.
	currency string
	digits   int
}

func (c *csvRow) field(rec []string, col int) string {
	if c.idx[col] < 0 {
		return ""
	}
	return strings.TrimSpace(rec[c.idx[col]])
}

func (c *csvRow) errorf(line, col int, format string, args ...any) error {
	name := csvColumns[col]
	if c.idx[col] >= 0 {
		name = c.header[c.idx[col]]
	}
	return c.opts.errorf(line, name, format, args...)
}

func (c *csvRow) parse(rec []string, line int) (reconcile.Transaction, error) {
	t := reconcile.Transaction{
		RawKind:      c.field(rec, csvType),
		OrderNo:      c.field(rec, csvOrderNo),
		RefundNo:     c.field(rec, csvRefundNo),
		ChannelTxnID: c.field(rec, csvChannelTxnID),
		Currency:     c.field(rec, csvCurrency),
		Line:         line,
	}
	kind := t.RawKind
	if kind != "payment" && kind != "refund" {
		kind = strings.ToLower(kind)
	}
	switch kind {
	case "payment":
		t.Kind = reconcile.KindPayment
		if t.OrderNo == "" {
			return t, c.errorf(line, csvOrderNo, "empty order number on a payment row")
		}
		if t.RefundNo != "" {
			return t, c.errorf(line, csvRefundNo, "refund number %s on a payment row", reconcile.Quote(t.RefundNo))
		}
	case "refund":
		t.Kind = reconcile.KindRefund
		if t.RefundNo == "" {
			return t, c.errorf(line, csvRefundNo, "empty refund number on a refund row")
		}
	case "":
		return t, c.errorf(line, csvType, "empty type")
	default:
		// Kept, not refused: the matcher puts rows it cannot classify in
		// front of a person.
		t.Kind = reconcile.KindOther
	}

	if t.Currency != c.currency || c.currency == "" {
		digits, ok := reconcile.CurrencyDigits(t.Currency)
		if !ok {
			return t, c.errorf(line, csvCurrency, "unknown currency %s", reconcile.Quote(t.Currency))
		}
		c.currency, c.digits = t.Currency, digits
	}
	digits := c.digits
	var (
		ok  bool
		err error
	)
	amount := c.field(rec, csvAmount)
	if t.Amount, ok = plainDecimal(amount, digits); !ok {
		t.Amount, err = parseAmount(amount, t.Currency)
		if err != nil {
			return t, c.errorf(line, csvAmount, "%w", err)
		}
	}

	at := c.field(rec, csvOccurredAt)
	// A time of exactly the naive shape is never RFC 3339, so trying it
	// first reads nothing differently.
	if t.OccurredAt, ok = dateTime(at, c.loc); !ok {
		t.OccurredAt, err = time.Parse(time.RFC3339, at)
		if err != nil {
			t.OccurredAt, err = time.ParseInLocation(time.DateTime, at, c.loc)
			if err != nil {
				return t, c.errorf(line, csvOccurredAt, "%s: want RFC 3339 or YYYY-MM-DD HH:MM:SS", reconcile.Quote(at))
			}
		}
	}

	if fee := c.field(rec, csvFee); fee != "" {
		// Thousandths of a minor unit, so WeChat-style five-decimal CNY
		// fees survive a round trip through the canonical format.
		if t.FeeMilli, ok = signedDecimal(fee, digits+3); !ok {
			t.FeeMilli, err = reconcile.ParseDecimal(fee, digits+3)
			if err != nil {
				return t, c.errorf(line, csvFee, "%w", err)
			}
		}
	}

	s := c.field(rec, csvStatus)
	status := s
	if s != "" && s != "SUCCESS" {
		status = strings.ToUpper(s)
	}
	switch status {
	case "", "SUCCESS":
		t.Status = reconcile.StatusSuccess
	case "PROCESSING", "PENDING":
		t.Status = reconcile.StatusProcessing
	case "FAILED", "CLOSED":
		t.Status = reconcile.StatusFailed
	default:
		return t, c.errorf(line, csvStatus, "unknown status %s (want SUCCESS, PROCESSING, PENDING, FAILED or CLOSED)", reconcile.Quote(s))
	}
	return t, nil
}
