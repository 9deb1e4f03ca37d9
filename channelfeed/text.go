package channelfeed

import (
	"strings"
	"unicode/utf8"
)

// textFault says why s cannot be stored as PostgreSQL text, or "" when it
// can: text holds valid UTF-8 without NUL. Every field of every file is
// held to it, header included, so that such a field stops the file where
// its line and column are known, instead of failing the run in the
// database ("invalid byte sequence for encoding UTF8: 0x00") without them.
func textFault(s string) string {
	if len(s) <= 32 {
		// Past its ASCII start nothing of s can be NUL, nor make it
		// invalid. A longer s (a line) is read faster by the two calls.
		s = s[textPrefix(s):]
	}
	switch {
	case s == "":
		return ""
	case strings.IndexByte(s, 0) >= 0:
		return "NUL byte (PostgreSQL text cannot hold one)"
	case !utf8.ValidString(s):
		return "invalid UTF-8"
	}
	return ""
}

// textPrefix is the length of the start of s that is ASCII without NUL,
// all of it for the usual field: read eight bytes at a time, a field of a
// few dozen bytes costs about what utf8.ValidString alone costs, where
// that and strings.IndexByte cost about twice as much.
func textPrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// A NUL borrows into its high bit, a byte of 0x80 or more has it.
		if (w-0x0101010101010101|w)&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= utf8.RuneSelf {
			break
		}
	}
	return i
}

// checkHeader refuses a header with a field that textFault refuses,
// naming the field by its place.
func (o Options) checkHeader(line int, fields []string) error {
	for i, s := range fields {
		if why := textFault(s); why != "" {
			return o.errorf(line, "", "header field %d: %s", i+1, why)
		}
	}
	return nil
}

// checkRow refuses a row with a field that textFault refuses, naming the
// field by its header name in names, or by its place when it has none.
func (o Options) checkRow(line int, fields, names []string) error {
	for i, s := range fields {
		if why := textFault(s); why != "" {
			if i < len(names) && names[i] != "" {
				return o.errorf(line, names[i], "%s", why)
			}
			return o.errorf(line, "", "field %d: %s", i+1, why)
		}
	}
	return nil
}
