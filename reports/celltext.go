package reports

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"reconcile"
)

// How text is kept in a cell of the workbook, and read back from one.

// startsLikeFormula reports whether a spreadsheet would read s, typed into
// a cell or opened from a CSV file, as a formula.
func startsLikeFormula(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// cellString is v as sheet.text stores it: bidi controls shown
// (reconcile.ShowBidi), escaped as an xlsx string (xstring), and, when that
// is more than a cell holds, cut to fit with a note that says so, how long
// the value is and where it is whole (whole; "" when nowhere the reader can
// go).
func cellString(v, whole string) string {
	s := xstring(reconcile.ShowBidi(v))
	// A character takes at least as many bytes in UTF-8 as units in
	// UTF-16: a short value is not counted at all.
	if len(s) <= excelize.TotalCellChars || utf16Len(s) <= excelize.TotalCellChars {
		return s
	}
	note := fmt.Sprintf("… [cut: the value has %d characters", utf16Len(v))
	if whole != "" {
		note += "; the whole value is in " + whole
	}
	note = xstring(note + "]")
	// excelize cuts what is past the limit silently; cut before it, at a
	// character, and never inside an escape. Escapes are read from the
	// left, as unxstring reads them: in _x005F_x0041_ the last "_" of the
	// first is not the start of a second.
	room := excelize.TotalCellChars - utf16Len(note)
	end, n := 0, 0
	for end < len(s) {
		size, units := len("_xHHHH_"), len("_xHHHH_") // bytes, UTF-16 units
		if !isXEscape(s[end:]) {
			r, sz := utf8.DecodeRuneInString(s[end:])
			size, units = sz, utf16.RuneLen(r)
		}
		if n+units > room {
			break
		}
		end, n = end+size, n+units
	}
	return s[:end] + note
}

// utf16Len is the length of s as Excel and excelize count a cell's
// characters: in UTF-16 code units, so 😀 counts 2.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// xstring escapes s as an xlsx stores a string (ECMA-376's ST_Xstring), so
// the cell reads back as s: a character XML 1.0 cannot carry (a control
// character, U+FFFE, U+FFFF) is written _xHHHH_, and a "_" that would
// begin what reads as such an escape is written _x005F_. excelize stores a
// string as it is given: without this, "_x0041_" from a settlement file
// reads back as "A", and a control character as U+FFFD.
func xstring(s string) string {
	if !strings.Contains(s, "_x") && !strings.ContainsFunc(s, notXMLChar) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case notXMLChar(r):
			fmt.Fprintf(&b, "_x%04X_", r)
		case r == '_' && readsAsEscape(s[i:]):
			b.WriteString("_x005F_")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// unxstring is the inverse of xstring: the text of a string read from an
// xlsx file, its escapes replaced by the characters they stand for.
func unxstring(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if isXEscape(s[i:]) {
			n, _ := strconv.ParseUint(s[i+2:i+6], 16, 16)
			b.WriteRune(rune(n))
			i += len("_xHHHH_")
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// isXEscape reports whether s starts with an escape _xHHHH_.
func isXEscape(s string) bool {
	return len(s) >= len("_xHHHH_") && xHex(s) && s[6] == '_'
}

// readsAsEscape reports whether s, starting with a "_", would begin what
// reads as an escape if that "_" were written as it is: "_xHHHH" and then
// a "_", or a character xstring writes as an escape, which starts with one.
func readsAsEscape(s string) bool {
	if len(s) < len("_xHHHH_") || !xHex(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[6:])
	return r == '_' || notXMLChar(r)
}

// xHex reports whether s starts with "_x" and four hexadecimal digits.
func xHex(s string) bool {
	if len(s) < len("_xHHHH") || s[0] != '_' || s[1] != 'x' {
		return false
	}
	for _, c := range s[2:6] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// notXMLChar reports whether r is a character XML 1.0 cannot hold.
func notXMLChar(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF
}
