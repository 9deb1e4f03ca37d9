package reports_test

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/reports"
)

func TestWorkbookName(t *testing.T) {
	day, err := reconcile.NewBusinessDay("2026-11-28", shanghai)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reports.WorkbookName("wechatpay", day), "review-wechatpay-2026-11-28.xlsx"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// writeAndOpen writes the workbook of res and opens it again.
func writeAndOpen(t *testing.T, res *reconcile.Result) (*excelize.File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), reports.WorkbookName(res.Run.Channel, res.Run.Day))
	if err := reports.WriteWorkbook(path, res); err != nil {
		t.Fatalf("WriteWorkbook: %v", err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f, path
}

// findRow returns the 1-based row of sheet whose column col (1-based)
// holds value.
func findRow(t *testing.T, f *excelize.File, sheet string, col int, value string) int {
	t.Helper()
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if len(r) >= col && r[col-1] == value {
			return i + 1
		}
	}
	t.Fatalf("%s: no row with %q in column %d", sheet, value, col)
	return 0
}

func cellValue(t *testing.T, f *excelize.File, sheet, cell string, raw bool) string {
	t.Helper()
	v, err := f.GetCellValue(sheet, cell, excelize.Options{RawCellValue: raw})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkMoney checks that cell is a number holding exactly raw, shown as
// shown, with format as its number format.
func checkMoney(t *testing.T, f *excelize.File, sheet, cell, raw, shown, format string) {
	t.Helper()
	typ, err := f.GetCellType(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	if typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
		t.Errorf("%s!%s: got cell type %v, want a number", sheet, cell, typ)
	}
	if got := cellValue(t, f, sheet, cell, true); got != raw {
		t.Errorf("%s!%s raw: got %q, want %q", sheet, cell, got, raw)
	}
	if got := cellValue(t, f, sheet, cell, false); got != shown {
		t.Errorf("%s!%s shown: got %q, want %q", sheet, cell, got, shown)
	}
	id, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.GetStyle(id)
	if err != nil {
		t.Fatal(err)
	}
	if st.CustomNumFmt == nil || *st.CustomNumFmt != format {
		got := "<none>"
		if st.CustomNumFmt != nil {
			got = *st.CustomNumFmt
		}
		t.Errorf("%s!%s number format: got %s (builtin %d), want %s", sheet, cell, got, st.NumFmt, format)
	}
}

// sheetXML returns the XML part of a worksheet, read from the file itself,
// for what excelize has no getter for.
func sheetXML(t *testing.T, path, part string) string {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	r, err := z.Open(part)
	if err != nil {
		t.Fatalf("open %s: %v", part, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteWorkbook(t *testing.T) {
	res := testResult(t)
	f, path := writeAndOpen(t, res)

	t.Run("sheets in order", func(t *testing.T) {
		got, want := f.GetSheetList(), []string{"Summary", "Review", "Auto-reversed"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})

	t.Run("review header", func(t *testing.T) {
		rows, err := f.GetRows("Review")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"Category", "Order No", "Refund No", "Channel Txn ID", "Original Txn ID", "Local Txn ID",
			"Local Amount", "Channel Amount", "Difference", "Currency", "Time", "Hint", "Decision"}
		if got := rows[0]; !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		if got, want := len(rows)-1, res.NeedsReview(); got != want {
			t.Errorf("review rows: got %d, want %d", got, want)
		}
		for _, r := range rows[1:] {
			if r[1] == "O-500" {
				t.Errorf("auto-reversed O-500 listed for review: %q", r)
			}
		}
	})

	t.Run("review amount mismatch row", func(t *testing.T) {
		r := findRow(t, f, "Review", 2, "O-100")
		cell := func(col string) string { return col + itoa(r) }
		for col, want := range map[string]string{
			"A": "amount_mismatch", "D": "4200000100", "F": "4200000100", "J": "CNY",
			"K": "2026-11-28 18:15:00", "L": "The channel took 1.00 more than we recorded.", "M": "",
		} {
			if got := cellValue(t, f, "Review", cell(col), false); got != want {
				t.Errorf("%s: got %q, want %q", cell(col), got, want)
			}
		}
		checkMoney(t, f, "Review", cell("G"), "99.80", "99.80", "#,##0.00")
		checkMoney(t, f, "Review", cell("H"), "100.80", "100.80", "#,##0.00")
		checkMoney(t, f, "Review", cell("I"), "1.00", "1.00", "#,##0.00")
	})

	t.Run("review money by currency digits", func(t *testing.T) {
		jpy := findRow(t, f, "Review", 2, "O-400")
		checkMoney(t, f, "Review", "G"+itoa(jpy), "5000", "5,000", "#,##0")
		if got := cellValue(t, f, "Review", "H"+itoa(jpy), false); got != "" {
			t.Errorf("channel amount of missing_channel: got %q, want empty", got)
		}
		if got := cellValue(t, f, "Review", "I"+itoa(jpy), false); got != "" {
			t.Errorf("difference without a channel side: got %q, want empty", got)
		}
		kwd := findRow(t, f, "Review", 2, "O-700")
		checkMoney(t, f, "Review", "H"+itoa(kwd), "1.234", "1.234", "#,##0.000")
		checkMoney(t, f, "Review", "I"+itoa(kwd), "0.234", "0.234", "#,##0.000")
		big := findRow(t, f, "Review", 4, "'"+hostileAt)
		checkMoney(t, f, "Review", "H"+itoa(big), "1234.56", "1,234.56", "#,##0.00")
		if got := cellValue(t, f, "Review", "I"+itoa(big), false); got != "" {
			t.Errorf("difference without a local side: got %q, want empty", got)
		}
	})

	t.Run("unrecognized row names its kind", func(t *testing.T) {
		r := findRow(t, f, "Review", 2, "O-800")
		if got, want := cellValue(t, f, "Review", "L"+itoa(r), false), "row kind: REVOKED"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})

	t.Run("decision dropdown", func(t *testing.T) {
		dvs, err := f.GetDataValidations("Review")
		if err != nil {
			t.Fatal(err)
		}
		if len(dvs) != 1 {
			t.Fatalf("got %d data validations, want 1", len(dvs))
		}
		dv := dvs[0]
		if got, want := dv.Sqref, "M2:M"+itoa(res.NeedsReview()+1); got != want {
			t.Errorf("range: got %q, want %q", got, want)
		}
		if got, want := dv.Type, "list"; got != want {
			t.Errorf("type: got %q, want %q", got, want)
		}
		if got, want := dv.Formula1, `"approve,reject,investigate"`; got != want {
			t.Errorf("choices: got %s, want %s", got, want)
		}
	})

	t.Run("frozen header", func(t *testing.T) {
		for _, sheet := range []string{"Review", "Auto-reversed"} {
			p, err := f.GetPanes(sheet)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Freeze || p.YSplit != 1 || p.TopLeftCell != "A2" {
				t.Errorf("%s panes: got %+v, want frozen at A2", sheet, p)
			}
		}
	})

	t.Run("autofilter and no formulas", func(t *testing.T) {
		xml := sheetXML(t, path, "xl/worksheets/sheet2.xml")
		if !strings.Contains(xml, "<dataValidation ") {
			t.Fatalf("sheet2.xml is not the Review sheet:\n%s", xml)
		}
		m := regexp.MustCompile(`<autoFilter ref="([^"]*)"`).FindStringSubmatch(xml)
		if m == nil {
			t.Fatal("got no <autoFilter> in the Review sheet")
		}
		if got, want := strings.ReplaceAll(m[1], "$", ""), "A1:M"+itoa(res.NeedsReview()+1); got != want {
			t.Errorf("autofilter range: got %q, want %q", got, want)
		}
		if !strings.Contains(xml, `<pane `) || !strings.Contains(xml, `state="frozen"`) {
			t.Error("got no frozen pane in the Review sheet")
		}
		for i := 1; i <= 3; i++ {
			part := "xl/worksheets/sheet" + itoa(i) + ".xml"
			if x := sheetXML(t, path, part); strings.Contains(x, "<f>") || strings.Contains(x, "<f ") {
				t.Errorf("%s holds a formula", part)
			}
		}
	})

	t.Run("auto-reversed row", func(t *testing.T) {
		rows, err := f.GetRows("Auto-reversed")
		if err != nil {
			t.Fatal(err)
		}
		want := [][]string{
			{"Category", "Order No", "Refund No", "Channel Txn ID", "Original Txn ID", "Amount", "Currency", "Time", "Journal Key"},
			{"duplicate_payment", "O-500", "", "4200000501", "4200000500", "20.00", "CNY", "2026-11-28 18:15:00", "wechatpay:4200000501"},
		}
		if len(rows) != len(want) {
			t.Fatalf("got %d rows %q, want %d", len(rows), rows, len(want))
		}
		for i := range want {
			if !slices.Equal(rows[i], want[i]) {
				t.Errorf("row %d: got %q, want %q", i+1, rows[i], want[i])
			}
		}
		checkMoney(t, f, "Auto-reversed", "F2", "20.00", "20.00", "#,##0.00")
	})

	t.Run("summary facts", func(t *testing.T) {
		for label, want := range map[string]string{
			"Run ID": "run-1", "Channel": "wechatpay", "Business date": "2026-11-28", "Status": "SUCCEEDED",
			"Dry run": "no", "File": "2026-11-28.csv", "File SHA-256": res.Run.FileSHA256,
			"Started": "2026-11-29 03:00:00 +08:00", "Finished": "2026-11-29 03:01:30 +08:00",
			"Channel rows": "17", "Local rows": "15", "Auto reversed": "1", "Needs review": "7", "Journals": "1",
		} {
			r := findRow(t, f, "Summary", 1, label)
			if got := cellValue(t, f, "Summary", "B"+itoa(r), false); got != want {
				t.Errorf("%s: got %q, want %q", label, got, want)
			}
		}
		r := findRow(t, f, "Summary", 1, "Money at risk (JPY)")
		checkMoney(t, f, "Summary", "B"+itoa(r), "5000", "5,000", "#,##0")
	})

	t.Run("summary categories", func(t *testing.T) {
		rows, err := f.GetRows("Summary")
		if err != nil {
			t.Fatal(err)
		}
		type line struct{ cur, count, channel, local, risk string }
		got := map[string][]line{}
		for _, r := range rows {
			r = append(r, make([]string, 7)...)
			if reconcile.Category(r[0]) == "" || !slices.Contains(reconcile.Categories, reconcile.Category(r[0])) {
				continue
			}
			got[r[0]] = append(got[r[0]], line{r[1], r[2], r[3], r[4], r[5]})
			if r[6] == "" && len(got[r[0]]) == 1 {
				t.Errorf("%s: no description", r[0])
			}
		}
		want := map[string][]line{
			"matched":           {{"", "10", "", "", ""}},
			"amount_mismatch":   {{"CNY", "1", "100.80", "99.80", "1.00"}, {"KWD", "1", "1.234", "1.000", "0.234"}},
			"status_mismatch":   {{"CNY", "1", "50.00", "50.00", "50.00"}},
			"missing_local":     {{"CNY", "1", "1,234.56", "", "1,234.56"}},
			"missing_channel":   {{"JPY", "1", "", "5,000", "5,000"}},
			"duplicate_payment": {{"CNY", "1", "20.00", "20.00", "0.00"}},
			"duplicate_refund":  {{"CNY", "1", "99.80", "", "99.80"}},
			"unrecognized":      {{"CNY", "1", "3.00", "", "3.00"}},
		}
		for _, c := range reconcile.Categories {
			if !slices.Equal(got[string(c)], want[string(c)]) {
				t.Errorf("%s: got %+v, want %+v", c, got[string(c)], want[string(c)])
			}
		}
	})
}

func TestWorkbookZeroCounts(t *testing.T) {
	res := testResult(t)
	res.Findings = nil
	res.Journals = nil
	res.Counts = map[reconcile.Category]int{reconcile.Matched: 3}
	f, _ := writeAndOpen(t, res)
	for _, c := range reconcile.Categories {
		t.Run(string(c), func(t *testing.T) {
			r := findRow(t, f, "Summary", 1, string(c))
			want := "0"
			if c == reconcile.Matched {
				want = "3"
			}
			if got := cellValue(t, f, "Summary", "C"+itoa(r), false); got != want {
				t.Errorf("count: got %q, want %q", got, want)
			}
		})
	}
	dvs, err := f.GetDataValidations("Review")
	if err != nil {
		t.Fatal(err)
	}
	if len(dvs) != 1 {
		t.Errorf("got %d data validations on an empty Review sheet, want 1", len(dvs))
	}
}

func TestWorkbookHostileText(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"hyperlink formula", hostileFormula, "'" + hostileFormula},
		{"at function", hostileAt, "'" + hostileAt},
		{"plus", "+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"},
		{"minus", "-2+3", "'-2+3"},
		{"tab", "\t=1+1", "'\t=1+1"},
		{"carriage return", "\r=1+1", "'\r=1+1"},
		{"plain", "O-1=2", "O-1=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := testResult(t)
			res.Findings = []reconcile.Finding{{
				Category: reconcile.MissingLocal, Kind: reconcile.KindRefund,
				OrderNo: tt.value, RefundNo: tt.value, ChannelTxnID: tt.value, Hint: tt.value,
				HasChannel: true, ChannelAmount: 100, Currency: "CNY",
			}}
			res.Run.File = "/in/" + tt.value
			f, _ := writeAndOpen(t, res)
			for _, cell := range []string{"B2", "C2", "D2", "L2"} {
				typ, err := f.GetCellType("Review", cell)
				if err != nil {
					t.Fatal(err)
				}
				if typ != excelize.CellTypeSharedString && typ != excelize.CellTypeInlineString {
					t.Errorf("%s: got cell type %v, want a string", cell, typ)
				}
				formula, err := f.GetCellFormula("Review", cell)
				if err != nil {
					t.Fatal(err)
				}
				if formula != "" {
					t.Errorf("%s: got formula %q, want none", cell, formula)
				}
				if got := cellValue(t, f, "Review", cell, false); got != tt.want {
					t.Errorf("%s: got %q, want %q", cell, got, tt.want)
				}
			}
			if strings.Contains(tt.value, "/") {
				return // the workbook shows the base name of the file
			}
			r := findRow(t, f, "Summary", 1, "File")
			if got := cellValue(t, f, "Summary", "B"+itoa(r), false); got != tt.want {
				t.Errorf("file: got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWriteWorkbookAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "review.xlsx")
	if err := os.WriteFile(path, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteWorkbook(path, testResult(t)); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(entries), 1; got != want {
		t.Errorf("files in dir: got %d, want %d (temp file left behind?)", got, want)
	}
	if _, err := excelize.OpenFile(path); err != nil {
		t.Errorf("reopen replaced workbook: %v", err)
	}
	if err := reports.WriteWorkbook(filepath.Join(dir, "missing", "review.xlsx"), testResult(t)); err == nil {
		t.Error("got no error writing into a missing directory")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
