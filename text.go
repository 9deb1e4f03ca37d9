package reconcile

import (
	"fmt"
	"strings"
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
