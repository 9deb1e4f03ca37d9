package reports_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/reports"
)

// TestWorkbookTextExact: text reads back from the file exactly as it came,
// whatever it holds: what looks like the xlsx escape _xHHHH_ and the
// characters XML cannot carry included, and values that differ only in
// such escapes side by side in one workbook, in either order.
func TestWorkbookTextExact(t *testing.T) {
	values := []string{
		"_x0041_", "A", "_x005F_x0041_", "_x005F_x005F_x0041_", "_x005F_", "_x005F_x005F_",
		"__x0041__", "_x004", "_X0041_", "a\x01b", "a_x0001_b", "a_x005F_x0001_b", "\x00",
		"esc\x1b[31m", "\ufffe\uffff", "x\r\ny\tz", " both ends ", "金额_x4E00_", "_x0000\x0e",
	}
	for _, order := range []string{"forward", "backward"} {
		t.Run(order, func(t *testing.T) {
			vs := slices.Clone(values)
			if order == "backward" {
				slices.Reverse(vs)
			}
			res := testResult(t)
			res.Findings = nil
			for i, v := range vs {
				res.Findings = append(res.Findings, reconcile.Finding{
					Ref: fmt.Sprintf("run-1-%04d", i+1), Category: reconcile.MissingLocal, Kind: reconcile.KindPayment,
					OrderNo: v, HasChannel: true, ChannelAmount: 100, Currency: "CNY",
				})
			}
			f, _ := writeAndOpen(t, res)
			for i, v := range vs {
				checkText(t, f, "Review", "C"+itoa(i+2), v)
			}
		})
	}
}

// utf16Len counts as Excel does: UTF-16 code units.
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// TestWorkbookLongValue: a value longer than a cell holds (32,767
// characters, counted in UTF-16 as Excel counts) is cut, and the cell says
// so, how long the value is and where it is whole; one that fits is not.
func TestWorkbookLongValue(t *testing.T) {
	emoji := strings.Repeat("😀", 20_000) + "END" // 40,003 characters in UTF-16, 20,003 runes
	long := strings.Repeat("x", 40_000)
	fits := strings.Repeat("y", excelize.TotalCellChars)
	res := testResult(t)
	res.Findings[0].OrderNo = emoji // run-1-0001, on the Review sheet
	res.Findings[0].Hint = fits
	res.Findings[1].Hint = strings.Repeat("😀", excelize.TotalCellChars/2) + "z" // fits: 32,767 exactly
	for i := range res.Findings {
		switch res.Findings[i].Ref {
		case "run-1-0009": // pending
			res.Findings[i].Hint = long
		case "run-1-0006": // auto-reversed
			res.Findings[i].OriginalTxnID = long
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, reports.WorkbookName(res.Run.Channel, res.Run.Day))
	info, err := reports.WriteWorkbookWith(path, res, reports.WorkbookOptions{MaxLines: 3})
	if err != nil {
		t.Fatal(err)
	}
	if info.CSV == "" {
		t.Fatal("want a CSV export for this test")
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	cut := func(t *testing.T, sheet, cell, value string, says ...string) {
		t.Helper()
		got := cellValue(t, f, sheet, cell, true)
		if n := utf16Len(got); n > excelize.TotalCellChars {
			t.Errorf("%s!%s: %d characters, more than a cell holds", sheet, cell, n)
		}
		kept, note, ok := strings.Cut(got, "… [cut: ")
		if !ok {
			t.Fatalf("%s!%s: no note that the value was cut; ends %q", sheet, cell, got[max(0, len(got)-80):])
		}
		if !strings.HasPrefix(value, kept) || utf16Len(kept) < excelize.TotalCellChars-300 {
			t.Errorf("%s!%s: kept %d characters that are not the start of the value", sheet, cell, utf16Len(kept))
		}
		for _, s := range append(says, fmt.Sprintf("%d characters", utf16Len(value))) {
			if !strings.Contains(note, s) {
				t.Errorf("%s!%s: note %q does not say %q", sheet, cell, note, s)
			}
		}
	}
	t.Run("review line", func(t *testing.T) {
		cut(t, "Review", "C2", emoji, "finding run-1-0001", info.CSV)
	})
	t.Run("pending line", func(t *testing.T) {
		cut(t, "Pending", "H2", long, "finding run-1-0009")
	})
	t.Run("auto-reversed line", func(t *testing.T) {
		cut(t, "Auto-reversed", "E2", long, "finding run-1-0006")
	})
	t.Run("values that fit are whole", func(t *testing.T) {
		if got := cellValue(t, f, "Review", "M2", true); got != fits {
			t.Errorf("a value of exactly %d characters: got %d", len(fits), len(got))
		}
		if got, want := cellValue(t, f, "Review", "M3", true), res.Findings[1].Hint; got != want {
			t.Errorf("a value of exactly 32,767 UTF-16 units: got %d, want %d", utf16Len(got), utf16Len(want))
		}
	})
	t.Run("CSV is whole", func(t *testing.T) {
		recs := readCSV(t, filepath.Join(dir, info.CSV))
		if got := recs[1][2]; got != emoji {
			t.Errorf("CSV order number: got %d characters, want the whole %d", utf16Len(got), utf16Len(emoji))
		}
	})
	t.Run("a dry run stores no finding", func(t *testing.T) {
		res.Run.DryRun = true
		f, _ := writeAndOpen(t, res)
		got := cellValue(t, f, "Review", "C2", true)
		if !strings.Contains(got, "… [cut: ") || strings.Contains(got, "database") {
			t.Errorf("dry run: got note %q, want one that does not point at the database", got[max(0, len(got)-120):])
		}
	})
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestWorkbookBidi: bidi controls in a value from a file are shown, in every
// sheet and in the CSV export, so "refund 001" cannot read as another value.
func TestWorkbookBidi(t *testing.T) {
	const rlo = "refund \u202e100 dnufer\u202c"
	const shown = "refund [U+202E]100 dnufer[U+202C]"
	res := testResult(t)
	for i := range res.Findings {
		fd := &res.Findings[i]
		fd.OrderNo = rlo
		fd.Hint = rlo
	}
	res.Run.File = "/in/bill\u202Evsc.exe"
	res.Run.Error = "bad row: " + rlo
	dir := t.TempDir()
	path := filepath.Join(dir, reports.WorkbookName(res.Run.Channel, res.Run.Day))
	info, err := reports.WriteWorkbookWith(path, res, reports.WorkbookOptions{MaxLines: 2})
	if err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sheet, cells := range map[string]map[string]string{
		"Review":        {"C2": shown, "M2": shown},
		"Pending":       {"B2": shown, "H2": shown},
		"Auto-reversed": {"B2": shown},
		"Summary": {
			"B" + itoa(findRow(t, f, "Summary", 1, "File")):  "bill[U+202E]vsc.exe",
			"B" + itoa(findRow(t, f, "Summary", 1, "Error")): "bad row: " + shown,
		},
	} {
		for cell, want := range cells {
			checkText(t, f, sheet, cell, want)
		}
	}
	recs := readCSV(t, filepath.Join(dir, info.CSV))
	for _, rec := range recs[1:] {
		if got := rec[2]; got != shown {
			t.Errorf("CSV order number: got %q, want %q", got, shown)
		}
		if strings.ContainsFunc(strings.Join(rec, ","), reconcile.IsBidiControl) {
			t.Errorf("CSV line %q holds a bidi control", rec)
		}
	}
}
