package payouts

import (
	"strings"
	"time"
	"unicode/utf8"

	"reconcile"
)

// The rules' own tests, each one small function, so that a rule can be
// read, and changed, apart from the indexes that make it fast.

// booked is rule 15a: only booked entries take part. A pending entry, or
// one the bank only tells of, may still change or vanish.
func booked(e reconcile.BankEntry) bool { return e.Status == "BOOK" }

// carries is rule 15a: an entry can carry a payout only in the payout's
// currency and direction, a payout to us as a credit, one the channel
// takes from us (Amount < 0) as a debit of its size. A reversal undoes an
// earlier entry, so it is never a payout arriving; a payout of nothing
// never travels.
func carries(p reconcile.Payout, e reconcile.BankEntry) bool {
	return p.Amount != 0 && booked(e) && !e.Reversal && e.Currency == p.Currency && e.Credit == (p.Amount > 0)
}

// sendsBack is rule 15f's direction: an entry moves an arrived payout's
// money back when it goes the other way in the payout's currency, a debit
// after a payout to us, a credit after one the channel took.
func sendsBack(p reconcile.Payout, e reconcile.BankEntry) bool {
	return p.Amount != 0 && booked(e) && e.Currency == p.Currency && e.Credit != (p.Amount > 0)
}

// minRefLen is rule 15b's shortest id or reference looked for in an
// entry's text: a shorter one would be found in texts it has nothing to
// do with.
const minRefLen = 4

// namesAt is rule 15b's test of a name in an entry's text: the payout's
// id or reference at i, as a whole word (nothing but its edge, or a
// character that is not a letter or a digit, on either side), in its
// own case. po_12 is not named by "po_123".
func namesAt(text, ref string, i int) bool {
	return i >= 0 && len(text)-i >= len(ref) && text[i:i+len(ref)] == ref &&
		edgeBefore(text, i) && edgeAfter(text, i+len(ref))
}

// holdsName is rule 15c's test of a channel's counterparty name in an
// entry's counterparty or remittance text: as a whole word, in any case.
func holdsName(text, name string) bool {
	if name == "" {
		return false
	}
	ascii := name[0] < utf8.RuneSelf // else its other case may begin with another byte
	for i := 0; len(text)-i >= len(name); {
		if (!ascii || foldByte(text[i]) == foldByte(name[0])) && edgeBefore(text, i) &&
			strings.EqualFold(text[i:i+len(name)], name) && edgeAfter(text, i+len(name)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	return false
}

// dayRange is rule 15c's window: the dates within days of date, on
// either side, both ends included. A payout is looked for among the
// entries of its expected date's range, and an entry among the payouts
// expected in its date's: each the other's, since the range is the same
// both ways.
func dayRange(date time.Time, days int) (from, to time.Time) {
	return date.AddDate(0, 0, -days), date.AddDate(0, 0, days)
}

// overdue is rules 15d and 15e: the night is past a date and the window
// after it. A payout expected on the 30th with 3 days is missing on the
// night of the 4th, not of the 3rd; a credit of the 30th waits as long.
func overdue(day, date time.Time, window int) bool {
	return day.After(date.AddDate(0, 0, window))
}

// returnWindow is rule 15f's window for a reversal that names nothing:
// from the payout's arrival to window days after it.
func returnWindow(arrivedOn, date time.Time, window int) bool {
	return !date.Before(arrivedOn) && !date.After(arrivedOn.AddDate(0, 0, window))
}

// entryDate is an entry's date: the day it was booked, else its value
// date, else (a statement that gives neither) the night's.
func entryDate(e reconcile.BankEntry, day time.Time) time.Time {
	switch {
	case !e.BookedOn.IsZero():
		return e.BookedOn
	case !e.ValueOn.IsZero():
		return e.ValueOn
	}
	return day
}

// bankRef names an entry: the bank's reference, else its key.
func bankRef(e *Entry) string {
	if e.BankRef != "" {
		return e.BankRef
	}
	return e.Key
}
