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
// dispute_id, payment_txn_id and reason are read on a dispute's events
// and (payment_txn_id) a refund reversal only; payout_id and payout_date
// name the payout a row was paid out in, and when it reaches the bank.
var csvColumns = [...]string{"type", "order_no", "refund_no", "channel_txn_id", "amount", "currency", "occurred_at", "fee", "status",
	"dispute_id", "payment_txn_id", "reason", "payout_id", "payout_date"}

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
	csvDisputeID
	csvPaymentTxnID
	csvReason
	csvPayoutID
	csvPayoutDate
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
	br, rows, err := openText(ctx, r, opts, emit)
	if err != nil {
		return err
	}

	records := &csvRecords{br: br, opts: opts, text: opts.slabs}
	if p.viaEncodingCSV {
		records.cr = newCSVReader(br, opts, 1)
	}
	return parseCSV(records, opts, &rows)
}

func parseCSV(records *csvRecords, opts Options, rows *rowSink) error {
	row, err := readCSVHeader(records, opts)
	if err != nil {
		return err
	}
	rows.reversalColumn = row.name(csvAmount)
	for {
		rec, line, valid, err := records.read()
		if err == io.EOF {
			return row.payouts.close(opts)
		}
		if err != nil {
			return csvReadError(opts, 0, err)
		}
		if len(rec) != len(row.names) {
			return opts.errorf(line, "", "row has %d fields, header has %d", len(rec), len(row.names))
		}
		if !valid {
			if err := opts.checkRow(line, rec, row.names); err != nil {
				return err
			}
		}
		if err := rows.put(row.parse(rec, line)); err != nil {
			return err
		}
	}
}

// readCSVHeader reads the header row and finds the canonical columns in
// it, for the rows after it.
func readCSVHeader(records *csvRecords, opts Options) (*csvRow, error) {
	rec, headerLine, _, err := records.read()
	if err == io.EOF {
		return nil, opts.errorf(0, "", "empty file: no header row")
	}
	if err != nil {
		return nil, csvReadError(opts, 1, err)
	}
	if err := opts.checkHeader(headerLine, rec); err != nil {
		return nil, err
	}
	// The record slice is reused, and its text may be too (textSlabs):
	// the header's strings are copied out.
	header := make([]string, len(rec))
	for i, h := range rec {
		header[i] = strings.Clone(h)
	}
	cols := newColumns(opts, header, csvColumns[:])
	for i := range header {
		if c := cols.place(i, cols.sameFold); c >= 0 {
			return nil, cols.duplicate(headerLine, i, c)
		}
	}
	for c := range csvRequired {
		if !cols.has(c) {
			return nil, opts.errorf(headerLine, csvColumns[c], "missing required column (%s)", describeHeader(header, ','))
		}
	}
	row := &csvRow{columns: cols, loc: opts.location()}
	row.payouts = payoutBook{field: cols.name(csvPayoutID), dateField: cols.name(csvPayoutDate),
		amountField: cols.name(csvAmount), feeField: cols.name(csvFee)}
	return row, nil
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
	text *textSlabs
	// line is the number of lines read before cr took over, counted as
	// encoding/csv counts them: blank lines too.
	line int
	cr   *csv.Reader // nil until a line needs it
}

// read returns the next record, its fields trimmed (trimFields), the line
// it starts on and whether its fields are known to be text
// reconcile.TextFault takes; io.EOF at the end.
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
		s := r.text.str(b) // the record's one string; fields share it
		rec = r.rec[:0]
		for {
			i := strings.IndexByte(s, ',')
			if i < 0 {
				break
			}
			rec = append(rec, trimSpace(s[:i]))
			s = s[i+1:]
		}
		rec = append(rec, trimSpace(s))
		r.rec = rec
		// The fields join with ASCII commas and white space into the
		// line, so they are valid UTF-8 without NUL exactly when it is.
		return rec, r.line, text, nil
	}
	rec, err = r.cr.Read()
	if err != nil {
		return rec, 0, false, shiftLines(err, r.line)
	}
	line, _ = r.cr.FieldPos(0)
	trimFields(rec, "")
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
	columns
	loc *time.Location

	// A file rarely holds more than one currency: the last one seen and
	// its digits spare a map lookup per row.
	currency string
	digits   int

	payouts payoutBook
}

// parse reads a record. The usual time is read on a fast path (see
// fastpath.go) here, the general parser, and its error, in occurredAt,
// called when the fast path does not read it; amounts take theirs in
// columns.money.
func (c *csvRow) parse(rec []string, line int) (t reconcile.Transaction, err error) {
	t = reconcile.Transaction{
		RawKind:      c.field(rec, csvType),
		OrderNo:      c.field(rec, csvOrderNo),
		RefundNo:     c.field(rec, csvRefundNo),
		ChannelTxnID: c.field(rec, csvChannelTxnID),
		Currency:     c.field(rec, csvCurrency),
		Line:         line,
	}
	if t.Kind, err = c.kind(t.RawKind, t.OrderNo, t.RefundNo, line); err != nil {
		return t, err
	}
	if t.Kind == reconcile.KindRefund && t.RefundNo == "" && t.ChannelTxnID == "" {
		return t, c.errorf(line, csvRefundNo, "refund row with neither a refund number nor a channel_txn_id to match it by")
	}
	if isEvent(t.Kind) {
		setEvent(&t, c.field(rec, csvDisputeID), c.field(rec, csvPaymentTxnID), c.field(rec, csvReason))
	}
	if t.Currency != c.currency || c.currency == "" {
		if err := c.setCurrency(t.Currency, line); err != nil {
			return t, err
		}
	}
	// A payout's own row alone is signed: a payout the channel debits.
	own := t.Kind == reconcile.KindBatch
	amount, err := c.money(rec, line, csvAmount, c.digits, own)
	if err != nil {
		return t, err
	}
	t.Amount = absAmount(amount)
	// A time of exactly the naive shape is never RFC 3339, so trying it
	// first reads nothing differently.
	at := c.field(rec, csvOccurredAt)
	var ok bool
	if t.OccurredAt, ok = dateTime(at, c.loc); !ok {
		if t.OccurredAt, err = c.occurredAt(at, line); err != nil {
			return t, err
		}
	}
	// Thousandths of a minor unit, so WeChat-style five-decimal CNY fees
	// survive a round trip through the canonical format.
	if c.field(rec, csvFee) != "" {
		if t.FeeMilli, err = c.money(rec, line, csvFee, c.digits+3, true); err != nil {
			return t, err
		}
	}
	if t.Status, err = c.status(c.field(rec, csvStatus), line); err != nil {
		return t, err
	}
	if own || c.has(csvPayoutID) {
		err = c.payout(rec, &t, own, amount)
	}
	return t, err
}

// payout reads what the row says of payouts: a payout's own row (own)
// states it pays out amount, any other row naming a payout is paid out
// in it.
func (c *csvRow) payout(rec []string, t *reconcile.Transaction, own bool, amount int64) error {
	var on time.Time
	if s := c.field(rec, csvPayoutDate); s != "" {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return c.errorf(t.Line, csvPayoutDate, "%s: want YYYY-MM-DD", reconcile.Quote(s))
		}
		on = d
	}
	return c.payouts.take(c.opts, t, c.field(rec, csvPayoutID), own, amount, on)
}

// kind reads the type of a row and checks the numbers its kind needs. A
// dispute's event may lack our order number: it is found by its
// payment_txn_id.
func (c *csvRow) kind(raw, orderNo, refundNo string, line int) (reconcile.Kind, error) {
	kind := raw
	if kind != "payment" && kind != "refund" {
		kind = strings.ToLower(kind)
	}
	switch kind {
	case "payment":
		if orderNo == "" {
			return "", c.errorf(line, csvOrderNo, "empty order number on a payment row")
		}
		return reconcile.KindPayment, c.noRefundNo(refundNo, kind, line)
	case "refund":
		// A refund without our number is matched by its channel_txn_id.
		return reconcile.KindRefund, nil
	case "refund_reversal":
		return reconcile.KindRefundReversal, nil
	case "chargeback":
		return reconcile.KindChargeback, c.noRefundNo(refundNo, kind, line)
	case "chargeback_reversal":
		return reconcile.KindChargebackReversal, c.noRefundNo(refundNo, kind, line)
	case "second_chargeback":
		return reconcile.KindSecondChargeback, c.noRefundNo(refundNo, kind, line)
	case "payout":
		// The file's one batch row: what a payout sends to the bank,
		// counted, never matched.
		return reconcile.KindBatch, nil
	case "":
		return "", c.errorf(line, csvType, "empty type")
	}
	// Kept, not refused: the matcher puts rows it cannot classify in
	// front of a person.
	return reconcile.KindOther, nil
}

// noRefundNo refuses refundNo on a row of type kind, which has none.
func (c *csvRow) noRefundNo(refundNo, kind string, line int) error {
	if refundNo != "" {
		return c.errorf(line, csvRefundNo, "refund number %s on a %s row", reconcile.Quote(refundNo), kind)
	}
	return nil
}

// setCurrency makes currency, a row's, the one whose digits parse uses.
func (c *csvRow) setCurrency(currency string, line int) error {
	digits, ok := reconcile.CurrencyDigits(currency)
	if !ok {
		return c.errorf(line, csvCurrency, "unknown currency %s", reconcile.Quote(currency))
	}
	c.currency, c.digits = strings.Clone(currency), digits // kept beyond its row
	return nil
}

func (c *csvRow) occurredAt(s string, line int) (time.Time, error) {
	if at, err := time.Parse(time.RFC3339, s); err == nil {
		return at, nil
	}
	at, err := time.ParseInLocation(time.DateTime, s, c.loc)
	if err != nil {
		return at, c.errorf(line, csvOccurredAt, "%s: want RFC 3339 or YYYY-MM-DD HH:MM:SS", reconcile.Quote(s))
	}
	return at, nil
}

func (c *csvRow) status(s string, line int) (reconcile.TxnStatus, error) {
	status := s
	if s != "" && s != "SUCCESS" {
		status = strings.ToUpper(s)
	}
	switch status {
	case "", "SUCCESS":
		return reconcile.StatusSuccess, nil
	case "PROCESSING", "PENDING":
		return reconcile.StatusProcessing, nil
	case "FAILED", "CLOSED":
		return reconcile.StatusFailed, nil
	}
	return "", c.errorf(line, csvStatus, "unknown status %s (want SUCCESS, PROCESSING, PENDING, FAILED or CLOSED)", reconcile.Quote(s))
}
