package bankfeed

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// "every text is … valid UTF-8, without NUL or control characters": a C1
// control (U+0085 NEL) in an MT940 :86: and in a BAI2 16 text is refused.
func TestC1ControlRefused(t *testing.T) {
	for _, tc := range []struct{ format, file, old string }{
		{"mt940", "testdata/mt940/ing-sepa/input.940", "STRIP\n"},
		{"bai2", "testdata/bai2/two-groups/input.bai2", "CHECK PAID"},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.Replace(b, []byte(tc.old), []byte(tc.old[:3]+"\u0085"+tc.old[3:]), 1)
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadFile(p, tc.format, Options{}, nil); err == nil {
			t.Errorf("%s: a U+0085 control character is accepted", tc.format)
		}
	}
}
