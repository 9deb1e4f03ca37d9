package reconcile

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsBidiControl reports whether r is one of the invisible characters that
// reorder the text around them (U+202E RIGHT-TO-LEFT OVERRIDE and its
// kin). In a value from a file they can make "refund 001" read as "100
// dnufer", so every output a person reads shows them or drops them.
func IsBidiControl(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F: // ALM, LRM, RLM
		return true
	case r >= 0x202A && r <= 0x202E: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	}
	return false
}

// ShowBidi makes the bidi controls of s visible as "[U+202E]", so text
// after them reads in its own order and a reader sees that it held one.
func ShowBidi(s string) string {
	if !strings.ContainsFunc(s, IsBidiControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if IsBidiControl(r) {
			fmt.Fprintf(&b, "[U+%04X]", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MaxChannelName is the longest channel name the job accepts.
const MaxChannelName = 64

// CheckChannelName refuses a channel name the job cannot use as it does:
// in file and directory names (out/<date>/<channel>/,
// review-<channel>-<date>.xlsx), in journal keys and accounts, in the
// alert. A name is 1 to 64 of the letters a–z and A–Z, the digits, '-',
// '_' and '.', and does not start with '.': so it can never be "..", a
// hidden file, a path with a '/', or carry a byte that a file system,
// PostgreSQL or Slack reads as something else.
func CheckChannelName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("channel name is empty")
	case len(name) > MaxChannelName:
		return fmt.Errorf("channel name %s is longer than %d characters", Quote(name), MaxChannelName)
	case name[0] == '.':
		return fmt.Errorf("channel name %s starts with '.'; a name is letters, digits, '-', '_' and '.', not starting with '.'", Quote(name))
	}
	for _, r := range name {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.' {
			continue
		}
		return fmt.Errorf("channel name %s holds %s; a name is letters, digits, '-', '_' and '.', not starting with '.'", Quote(name), Quote(string(r)))
	}
	return nil
}

// MaxKeyBytes is the longest order number, refund number or channel id
// the job takes, in bytes. The channels' own are a few dozen characters
// (WeChat Pay's and Alipay's at most 64, Adyen's references 80); the
// longest a merchant can choose is a Stripe metadata value, 500
// characters, at most 2,000 bytes. PostgreSQL cannot index much more (a
// B-tree entry is at most 2,704 bytes), and the findings and journals are
// indexed by these: a longer one would fail the commit with no line
// named. It is a misread column or a hostile file, refused where its line
// is known.
const MaxKeyBytes = 2048

// KeyFault says which of a row's order number, refund number, channel id,
// dispute id and payment id is longer than MaxKeyBytes, and how long, or
// "" when none is.
func KeyFault(t *Transaction) string {
	if len(t.OrderNo) <= MaxKeyBytes && len(t.RefundNo) <= MaxKeyBytes && len(t.ChannelTxnID) <= MaxKeyBytes &&
		len(t.DisputeID) <= MaxKeyBytes && len(t.PaymentID) <= MaxKeyBytes {
		return ""
	}
	for _, f := range [...]struct {
		name, s string
	}{{"order number", t.OrderNo}, {"refund number", t.RefundNo}, {"channel id", t.ChannelTxnID},
		{"dispute id", t.DisputeID}, {"payment id", t.PaymentID}} {
		if len(f.s) > MaxKeyBytes {
			return fmt.Sprintf("%s of %d bytes; the job takes at most %d", f.name, len(f.s), MaxKeyBytes)
		}
	}
	return ""
}

// TextFault says why s cannot be stored as PostgreSQL text, or "" when it
// can: text holds valid UTF-8 without NUL. Every field of every settlement
// file and every value read back from a workbook is held to it, so that
// such a value is refused where its line and column are known, instead of
// failing in the database ("invalid byte sequence for encoding UTF8:
// 0x00") without them.
func TextFault(s string) string {
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

// Printable replaces control characters, so a cell cannot move the
// cursor or forge a line of its own in the terminal, and shows the
// characters that reorder text (ShowBidi), so a cell cannot make
// a reference or a name read as another.
func Printable(s string) string {
	return ShowBidi(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
}

// EdgeSpace says whether s begins or ends with white space: a secret's
// spaces are kept as they are (config.Secret), and this is how its reader
// tells one that has them (ErrSecretSpaces).
func EdgeSpace(s string) bool {
	if s == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsSpace(first) || unicode.IsSpace(last)
}

// FirstLine is s up to its first line break, with " …" where it was cut:
// a message of several lines shown as one line of a list.
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
