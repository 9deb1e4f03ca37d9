package channelfeed

import (
	"encoding/binary"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The helpers below read the common shapes of a settlement field without
// allocating, at a fraction of the general parsers' cost, because a large
// file spends most of its time on them. Each reports false for anything
// but the plainest input, and the caller then runs the general parser,
// which alone decides what is an error and how it reads: a fast path never
// accepts a value the general one refuses, nor reads one differently.

// plainDecimal reads unsigned digits with at most one dot, like "99.80",
// as an integer scaled by 10^scale, as reconcile.ParseDecimal does.
func plainDecimal(s string, scale int) (int64, bool) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	// 18 digits stay below 2^63, so the sum needs no overflow check.
	if intPart == "" || len(intPart)+scale > 18 || (hasDot && frac == "") {
		return 0, false
	}
	var v int64
	for i := 0; i < len(intPart); i++ {
		c := intPart[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	for i := 0; i < len(frac); i++ {
		if c := frac[i]; c < '0' || c > '9' {
			return 0, false
		}
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > scale {
		return 0, false
	}
	for i := 0; i < len(frac); i++ {
		v = v*10 + int64(frac[i]-'0')
	}
	for range scale - len(frac) {
		v *= 10
	}
	return v, true
}

// signedDecimal is plainDecimal that also takes a leading minus, as a fee
// returned on a refund has.
func signedDecimal(s string, scale int) (int64, bool) {
	if rest, neg := strings.CutPrefix(s, "-"); neg {
		v, ok := plainDecimal(rest, scale)
		return -v, ok
	}
	return plainDecimal(s, scale)
}

// dateTime reads exactly "YYYY-MM-DD HH:MM:SS" in loc, with the ranges
// time.ParseInLocation(time.DateTime, s, loc) checks, and builds the same
// time.Time it does.
func dateTime(s string, loc *time.Location) (time.Time, bool) {
	if len(s) != len(time.DateTime) || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		month < 1 || month > 12 || day < 1 || day > daysIn(time.Month(month), year) ||
		hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, 0, loc), true
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(m time.Month, year int) int {
	switch m {
	case time.February:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// printableASCII reports whether every byte of b is printable ASCII,
// space to '~': such a line is valid UTF-8 and holds neither a CR nor a
// NUL, which one pass over its words says, where checking the three
// apart takes three passes. A line it refuses is checked the long way.
func printableASCII(b []byte) bool {
	if len(b) < 8 {
		for _, c := range b {
			if c < ' ' || c > '~' {
				return false
			}
		}
		return true
	}
	// The last eight bytes, which the words below may not reach whole.
	bad := unprintable(b[len(b)-8:])
	for ; len(b) >= 32; b = b[32:] {
		bad |= unprintable(b) | unprintable(b[8:]) | unprintable(b[16:]) | unprintable(b[24:])
	}
	for ; len(b) >= 8; b = b[8:] {
		bad |= unprintable(b)
	}
	return bad&0x8080808080808080 == 0
}

// unprintable sets the high bit of the bytes of the word at b that are
// not printable ASCII, and maybe of others when one is: a byte below 0x20
// borrows into its high bit (and may borrow from the byte above), one of
// 0x7F carries into it, one of 0x80 or above has it already.
func unprintable(b []byte) uint64 {
	const ones = 0x0101010101010101
	w := binary.LittleEndian.Uint64(b)
	return (w - 0x20*ones) | (w + ones) | w
}

// trimSpace is strings.TrimSpace, which a field that neither starts nor
// ends with white space cannot change: most fields are, and the check is
// much cheaper than the call on a file of millions of fields. A field of
// text (a WeChat Pay bill's product names, its Chinese statuses) ends in
// a letter of several bytes, decoded here once rather than trimmed.
func trimSpace(s string) string {
	if s == "" {
		return s
	}
	if edge := s[0]; edge <= ' ' || edge >= utf8.RuneSelf && startsWithSpace(s) {
		return strings.TrimSpace(s)
	}
	if edge := s[len(s)-1]; edge <= ' ' || edge >= utf8.RuneSelf && endsWithSpace(s) {
		return strings.TrimSpace(s)
	}
	return s
}

func startsWithSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

func endsWithSpace(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsSpace(r)
}
