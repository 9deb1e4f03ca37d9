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
type csvParser struct{}

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

func (csvParser) Parse(ctx context.Context, r io.Reader, opts Options, emit func(reconcile.Transaction) error) error {
	if emit == nil {
		emit = discard
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	empty, err := skipBOM(br)
	if err != nil {
		return opts.wrap(0, "", fmt.Errorf("read: %w", err))
	}
	if empty {
		return opts.errorf(0, "", "empty file")
	}

	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1 // a ragged row gets our own error, with the line
	cr.ReuseRecord = true
	rec, err := cr.Read()
	if err == io.EOF {
		return opts.errorf(0, "", "empty file: no header row")
	}
	if err != nil {
		return csvReadError(opts, 1, err)
	}
	headerLine, _ := cr.FieldPos(0)
	// ReuseRecord: the header's strings must be copied out before the
	// next Read overwrites the slice.
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
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvReadError(opts, 0, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			return opts.errorf(line, "", "row has %d fields, header has %d", len(rec), len(header))
		}
		for i, f := range rec {
			if !utf8.ValidString(f) {
				return opts.errorf(line, header[i], "invalid UTF-8")
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
	switch strings.ToLower(t.RawKind) {
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

	digits, ok := reconcile.CurrencyDigits(t.Currency)
	if !ok {
		return t, c.errorf(line, csvCurrency, "unknown currency %q", t.Currency)
	}
	amount, err := parseAmount(c.field(rec, csvAmount), t.Currency)
	if err != nil {
		return t, c.errorf(line, csvAmount, "%w", err)
	}
	t.Amount = amount

	at := c.field(rec, csvOccurredAt)
	t.OccurredAt, err = time.Parse(time.RFC3339, at)
	if err != nil {
		t.OccurredAt, err = time.ParseInLocation(time.DateTime, at, c.loc)
		if err != nil {
			return t, c.errorf(line, csvOccurredAt, "%q: want RFC 3339 or YYYY-MM-DD HH:MM:SS", at)
		}
	}

	if fee := c.field(rec, csvFee); fee != "" {
		// Thousandths of a minor unit, so WeChat-style five-decimal CNY
		// fees survive a round trip through the canonical format.
		t.FeeMilli, err = reconcile.ParseDecimal(fee, digits+3)
		if err != nil {
			return t, c.errorf(line, csvFee, "%w", err)
		}
	}

	switch s := c.field(rec, csvStatus); strings.ToUpper(s) {
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
