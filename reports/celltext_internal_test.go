package reports

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"reconcile"
)

func TestXstring(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain", "plain"},
		{"a\x01b", "a_x0001_b"},
		{"\x00\x1f\ufffe\uffff", "_x0000__x001F__xFFFE__xFFFF_"},
		{"tab\tnewline\ncr\r", "tab\tnewline\ncr\r"},
		{"_x0041_", "_x005F_x0041_"},
		{"_x004", "_x004"},
		{"_X0041_", "_X0041_"},
		{"__x0041__", "__x005F_x0041__"},
		// The "_" of an escape xstring writes ends a literal _x0000.
		{"_x0000\x0e", "_x005F_x0000_x000E_"},
	} {
		if got := xstring(tt.in); got != tt.want {
			t.Errorf("xstring(%q): got %q, want %q", tt.in, got, tt.want)
		}
		if got := unxstring(tt.want); got != tt.in {
			t.Errorf("unxstring(%q): got %q, want %q", tt.want, got, tt.in)
		}
	}
}

func FuzzXstring(f *testing.F) {
	for _, s := range []string{"", "_x0041_", "_x005F_x0041_", "a\x01b", "\ufffe", "__x0000__", "金额_x4E00_", "x0000\x0e000000_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		x := xstring(s)
		if strings.ContainsFunc(x, notXMLChar) {
			t.Errorf("xstring(%q) = %q holds a character XML cannot", s, x)
		}
		if got := unxstring(x); got != s {
			t.Errorf("unxstring(xstring(%q)) = %q", s, got)
		}
	})
}

func TestCellStringCut(t *testing.T) {
	limit := excelize.TotalCellChars
	for _, tt := range []struct{ name, v string }{
		{"ascii", strings.Repeat("x", 40_000)},
		{"escapes", strings.Repeat("\x01", 10_000)}, // 70,000 characters escaped
		{"surrogate pairs", strings.Repeat("😀", 20_000)},
		{"escape at every offset", strings.Repeat("ab_x0041_", 5_000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := cellString(tt.v, "the findings table of the database, finding run-1-0001")
			if n := utf16Len(got); n > limit {
				t.Fatalf("%d characters, more than %d", n, limit)
			}
			kept, note, ok := strings.Cut(unxstring(got), "… [cut: ")
			if !ok {
				t.Fatalf("no note: %q", got[len(got)-40:])
			}
			if !strings.HasPrefix(tt.v, kept) || len(kept) == 0 {
				t.Errorf("kept %q…, not the start of the value", kept[:min(len(kept), 20)])
			}
			if !strings.Contains(note, "finding run-1-0001") {
				t.Errorf("note %q does not say where the value is whole", note)
			}
		})
	}
	if v := strings.Repeat("y", limit); cellString(v, "") != v {
		t.Error("a value of exactly the limit was changed")
	}
}

// FuzzCellString: a value cut to fit a cell is within the limit once
// stored, and what it keeps is the start of the value.
func FuzzCellString(f *testing.F) {
	for _, s := range []string{"x", "ab_x0041_", "\x01", "😀", "_x005F_", "\u202e", "x0000\x0e000000_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || !utf8.ValidString(s) {
			return
		}
		v := strings.Repeat(s, excelize.TotalCellChars/len(s)+1)
		got := cellString(v, "")
		if n := utf16Len(got); n > excelize.TotalCellChars {
			t.Fatalf("%d characters, more than a cell holds", n)
		}
		kept, _, ok := strings.Cut(unxstring(got), "… [cut: the value has ")
		if !ok {
			if unxstring(got) != reconcile.ShowBidi(v) {
				t.Fatal("not cut, and not the value")
			}
			return
		}
		if !strings.HasPrefix(reconcile.ShowBidi(v), kept) {
			t.Fatalf("kept %q…, not the start of the value", kept[:min(len(kept), 40)])
		}
	})
}

// TestSheetStyleKeepsQuote: styling a cell that text gave the quote prefix
// keeps the prefix, in whichever order the two come; the styles the
// prefixed copies come from keep none.
func TestSheetStyleKeepsQuote(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	st, err := newStyles(f)
	if err != nil {
		t.Fatal(err)
	}
	s := &sheet{f: f, name: "Sheet1", st: st}
	s.text(1, 1, "=1+2") // text, then style
	s.style(1, 1, 1, 1, st.header)
	s.style(2, 1, 2, 1, st.header) // style, then text
	s.text(2, 1, "-3")
	s.text(3, 1, "plain")
	s.style(3, 1, 3, 1, st.header)
	if s.err != nil {
		t.Fatal(s.err)
	}
	xfs := f.Styles.CellXfs.Xf
	for cell, quoted := range map[string]bool{"A1": true, "B1": true, "C1": false} {
		id, err := f.GetCellStyle("Sheet1", cell)
		if err != nil {
			t.Fatal(err)
		}
		xf := xfs[id]
		if got := xf.QuotePrefix != nil && *xf.QuotePrefix; got != quoted {
			t.Errorf("%s: quote prefix %v, want %v", cell, got, quoted)
		}
		if *xf.FontID != *xfs[st.header].FontID || *xf.FillID != *xfs[st.header].FillID {
			t.Errorf("%s: lost the header's font or fill", cell)
		}
	}
	if q := xfs[st.header].QuotePrefix; q != nil && *q {
		t.Error("the header style itself got the quote prefix")
	}
}
