package channelfeed

import (
	"strings"
	"unicode"

	"reconcile"
)

// columns are the columns of a file as its header names them, and where
// each column the parser reads stands in its rows. A parser numbers the
// columns it reads (its slots) and finds them in the header once, by its
// format's rules of naming; a row is then read by index, not by name.
// Its fields come trimmed from the format's reader (see trimFields), so
// reading one is picking it.
type columns struct {
	opts  Options  // the file's: errors name its columns
	names []string // the header's names as written, trimmed
	want  []string // the name each slot is looked for by, for errors about a column the header lacks
	// at is the field index of each slot's column, -1 when the header
	// lacks it: held in place, as every format reads a handful of
	// columns, so a parse allocates nothing for it. A line of at most
	// maxLine bytes has fewer fields than an int32 holds.
	at [maxSlots]int32
}

// maxSlots is the most columns a format reads: Adyen's 20.
const maxSlots = 20

// newColumns is the columns of a header of names, as written, for a
// parser that reads the slots of want; none found yet.
func newColumns(opts Options, names, want []string) columns {
	c := columns{opts: opts, names: names, want: want}
	for i := range c.at {
		c.at[i] = -1
	}
	return c
}

// place takes field i of the header for the column of each slot that
// same says it names. It returns the first of those slots whose column
// an earlier field is, -1 when there is none: a column named twice.
func (c *columns) place(i int, same func(field, slot int) bool) int {
	for s := range c.want {
		if !same(i, s) {
			continue
		}
		if c.at[s] >= 0 {
			return s
		}
		c.at[s] = int32(i)
	}
	return -1
}

// sameFold is the rule of naming of most formats: field i names slot's
// column when it is named as the column is looked for, ignoring case. A
// slot looked for by no name is not read.
func (c *columns) sameFold(i, slot int) bool {
	return c.want[slot] != "" && strings.EqualFold(c.names[i], c.want[slot])
}

// duplicate is the error of field i of the header at line, the second
// column of slot.
func (c *columns) duplicate(line, i, slot int) error {
	return c.opts.errorf(line, c.names[i], "duplicate column (fields %d and %d)", c.at[slot]+1, i+1)
}

// has reports whether the header has slot's column.
func (c *columns) has(slot int) bool { return c.at[slot] >= 0 }

// field is slot's field of a row rec; "" when the header lacks the
// column, or the row stops short of it.
func (c *columns) field(rec []string, slot int) string {
	if i := int(c.at[slot]); i >= 0 && i < len(rec) {
		return rec[i]
	}
	return ""
}

// name is the name of slot's column as the header writes it, or as the
// parser looks for it when the header lacks it.
func (c *columns) name(slot int) string {
	if i := c.at[slot]; i >= 0 {
		return c.names[i]
	}
	return c.want[slot]
}

// errorf is the error of a row at line about slot's field.
func (c *columns) errorf(line, slot int, format string, args ...any) error {
	return c.opts.errorf(line, c.name(slot), format, args...)
}

// money is slot's field of a row rec read as parseMoney reads it, at
// scale and signed as it says; its error names the column. The usual
// amount is read on the fast path here, the rest by parseMoney.
func (c *columns) money(rec []string, line, slot, scale int, signed bool) (int64, error) {
	return c.moneyOf(c.field(rec, slot), line, slot, scale, signed)
}

// moneyOf is money of s, slot's field as a format writes it in full (see
// adyRow.amount).
func (c *columns) moneyOf(s string, line, slot, scale int, signed bool) (int64, error) {
	var v int64
	var ok bool
	if signed {
		v, ok = signedDecimal(s, scale)
	} else {
		v, ok = plainDecimal(s, scale)
	}
	if ok {
		return v, nil
	}
	v, err := parseMoney(s, scale, signed)
	if err != nil {
		return 0, c.errorf(line, slot, "%w", err)
	}
	return v, nil
}

// trimFields trims each field of a record in place, as a format's reader
// hands it on: of white space, and of the characters of chars (a
// mapping's trim, Mapping.Trim; "" in every other format).
func trimFields(rec []string, chars string) {
	for i, s := range rec {
		if chars != "" {
			rec[i] = trimAlso(s, chars)
		} else {
			rec[i] = trimSpace(s)
		}
	}
}

// trimAlso is s without white space, nor any of the characters of chars,
// at either end.
func trimAlso(s, chars string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(chars, r)
	})
}

// isEvent reports whether a row of kind is a dispute's event or a refund
// reversal: what carries a payment id, and a dispute's a dispute id.
func isEvent(kind reconcile.Kind) bool {
	return kind.Disputed() || kind == reconcile.KindRefundReversal
}

// setEvent sets what t, a dispute's event or a refund reversal of a CSV
// file, carries as its columns say: the payment's channel id, and for a
// dispute's event the dispute's id (the row's channel id when the file
// gives none) and the reason.
func setEvent(t *reconcile.Transaction, dispute, payment, reason string) {
	t.PaymentID = payment
	if t.Kind.Disputed() {
		if dispute == "" {
			dispute = t.ChannelTxnID
		}
		t.DisputeID, t.Reason = dispute, reason
	}
}
