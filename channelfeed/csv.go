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

	records := &csvRecords{br: br}
	if p.viaEncodingCSV {
		records.cr = newCSVReader(br)
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
	// The record slice is reused: the header's strings must be copied
	// out before the next read overwrites it.
	header := make([]string, len(rec))
	var idx [len(csvColumns)]int
	for i := range idx {
		idx[i] = -1
	}
	for i, h := range rec {
		if !utf8.ValidString(h) {
			return opts.errorf(headerLine, "", "header field %d: invalid UTF-8", i+1)
		}
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
			return opts.errorf(headerLine, csvColumns[c], "missing required column (header: %s)", strings.Join(header, ","))
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
			for i, f := range rec {
				if !utf8.ValidString(f) {
					return opts.errorf(line, header[i], "invalid UTF-8")
				}
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
// stay its own; the lines before are ones it reads the same way.
type csvRecords struct {
	br  *bufio.Reader
	rec []string // reused by every record
	// line is the number of lines read before cr took over, counted as
	// encoding/csv counts them: blank lines too.
	line int
	cr   *csv.Reader // nil until a line needs it
}

// read returns the next record, the line it starts on and whether its
// fields are known to be valid UTF-8; io.EOF at the end.
func (r *csvRecords) read() (rec []string, line int, validUTF8 bool, err error) {
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
		// valid UTF-8 exactly when it is.
		return rec, r.line, utf8.Valid(b), nil
	}
	rec, err = r.cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			moved := *pe
			moved.StartLine += r.line
			moved.Line += r.line
			err = &moved
		}
		return rec, 0, false, err
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
	r.cr = newCSVReader(io.MultiReader(bytes.NewReader(bytes.Clone(b)), rest))
}

func newCSVReader(r io.Reader) *csv.Reader {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // a ragged row gets our own error, with the line
	cr.ReuseRecord = true
	return cr
}

// errReader returns err, as the file did after the bytes before it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func csvReadError(opts Options, line int, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return opts.wrap(pe.Line, "", fmt.Errorf("%w (byte %d of the line)", pe.Err, pe.Column))
	}
	return opts.wrap(line, "", fmt.Errorf("read: %w", err))
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
			return t, c.errorf(line, csvRefundNo, "refund number %q on a payment row", t.RefundNo)
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
			return t, c.errorf(line, csvCurrency, "unknown currency %q", t.Currency)
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
				return t, c.errorf(line, csvOccurredAt, "%q: want RFC 3339 or YYYY-MM-DD HH:MM:SS", at)
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
		return t, c.errorf(line, csvStatus, "unknown status %q (want SUCCESS, PROCESSING, PENDING, FAILED or CLOSED)", s)
	}
	return t, nil
}
