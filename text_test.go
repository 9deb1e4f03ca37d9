package reconcile_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"reconcile"
)

func TestCheckChannelName(t *testing.T) {
	good := []string{"wechatpay", "acme-pay", "acme_pay.eu", "A1", strings.Repeat("a", reconcile.MaxChannelName)}
	for _, name := range good {
		if err := reconcile.CheckChannelName(name); err != nil {
			t.Errorf("%q: got %v, want accepted", name, err)
		}
	}
	bad := []struct{ name, want string }{
		{"", "empty"},
		{"..", "starts with '.'"},
		{".hidden", "starts with '.'"},
		{"../../x", "starts with '.'"},
		{"a/b", `holds "/"`},
		{`a\b`, `holds "\\"`},
		{"a b", `holds " "`},
		{"a\x00b", `holds "\x00"`},
		{"微信", `holds "微"`},
		{"pay\u202e", `holds "\u202e"`},
		{strings.Repeat("a", reconcile.MaxChannelName+1), "longer than 64"},
	}
	for _, tt := range bad {
		err := reconcile.CheckChannelName(tt.name)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

func TestShowBidi(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"refund \u202e100", "refund [U+202E]100"},
		{"\u2066x\u2069\u200f", "[U+2066]x[U+2069][U+200F]"},
		{"العربية", "العربية"}, // right-to-left text itself is left alone
	}
	for _, tt := range tests {
		if got := reconcile.ShowBidi(tt.in); got != tt.want {
			t.Errorf("ShowBidi(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTextFault checks TextFault against its definition, with every byte
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
						if got, want := reconcile.TextFault(s), plain(s); got != want {
							t.Fatalf("TextFault(%q) = %q, want %q", s, got, want)
						}
					}
				}
			}
		}
	}
}
