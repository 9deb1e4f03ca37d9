package channelfeed

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTextFault checks textFault against its definition, with every byte
// value at every place of fields of up to two words and a tail, before
// and after text that is not ASCII, and in lines longer than a field.
func TestTextFault(t *testing.T) {
	plain := func(s string) string {
		switch {
		case strings.IndexByte(s, 0) >= 0:
			return "NUL byte (PostgreSQL text cannot hold one)"
		case !utf8.ValidString(s):
			return "invalid UTF-8"
		}
		return ""
	}
	for _, around := range []string{"", "é", "中文"} {
		for n := range 20 {
			for at := range n {
				for c := range 256 {
					b := []byte(strings.Repeat("x", n))
					b[at] = byte(c)
					long := strings.Repeat("y", 40)
					for _, s := range []string{string(b), around + string(b), string(b) + around, long + string(b), string(b) + around + long} {
						if got, want := textFault(s), plain(s); got != want {
							t.Fatalf("textFault(%q) = %q, want %q", s, got, want)
						}
					}
				}
			}
		}
	}
}
