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

// reviewCols are the Review sheet's columns by header, as a person sees them.
var reviewCols = map[string]string{
	"Finding": "A", "Category": "B", "Order No": "C", "Refund No": "D", "Channel Txn ID": "E",
	"Original Txn ID": "F", "Local Txn ID": "G", "Local Amount": "H", "Channel Amount": "I",
	"Difference": "J", "Currency": "K", "Time": "L", "Hint": "M", "Decision": "N",
	"Reviewer": "O", "Note": "P", "Version": "Q", "Related": "R",
}

func TestWriteWorkbook(t *testing.T) {
	res := testResult(t)
	f, path := writeAndOpen(t, res)

	t.Run("sheets in order", func(t *testing.T) {
		got, want := f.GetSheetList(), []string{"Summary", "Review", "Pending", "Auto-reversed", "Trend"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})

	t.Run("review header", func(t *testing.T) {
		rows, err := f.GetRows("Review")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"Finding", "Category", "Order No", "Refund No", "Channel Txn ID", "Original Txn ID", "Local Txn ID",
			"Local Amount", "Channel Amount", "Difference", "Currency", "Time", "Hint", "Decision", "Reviewer", "Note", "Version", "Related"}
		if got := rows[0]; !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		for i, h := range want {
			if col, _ := excelize.ColumnNumberToName(i + 1); reviewCols[h] != col {
				t.Errorf("reviewCols[%s]: got %s, want %s", h, reviewCols[h], col)
			}
		}
		if got, want := len(rows)-1, res.NeedsReview(); got != want {
			t.Errorf("review rows: got %d, want %d", got, want)
		}
		for _, r := range rows[1:] {
			if r[2] == "O-500" || r[2] == "O-900" {
				t.Errorf("a finding that needs no review is listed for review: %q", r)
			}
		}
	})

	// Every cell of one line, blank ones included, so a column that moved
	// or a value in the wrong place shows.
	t.Run("review amount mismatch row", func(t *testing.T) {
		r := findRow(t, f, "Review", 3, "O-100")
		cell := func(h string) string { return reviewCols[h] + itoa(r) }
		for h, want := range map[string]string{
			"Finding": "run-1-0001", "Category": "amount_mismatch", "Order No": "O-100", "Refund No": "",
			"Channel Txn ID": "4200000100", "Original Txn ID": "", "Local Txn ID": "4200000100",
			"Currency": "CNY", "Time": "2026-11-28 18:15:00", "Hint": "The channel took 1.00 more than we recorded.",
			"Decision": "", "Reviewer": "", "Note": "",
		} {
			if got := cellValue(t, f, "Review", cell(h), false); got != want {
				t.Errorf("%s (%s): got %q, want %q", cell(h), h, got, want)
			}
		}
		for _, h := range []string{"Finding", "Category", "Order No", "Channel Txn ID", "Local Txn ID", "Currency", "Time", "Hint"} {
			typ, err := f.GetCellType("Review", cell(h))
			if err != nil {
				t.Fatal(err)
			}
			if typ != excelize.CellTypeSharedString && typ != excelize.CellTypeInlineString {
				t.Errorf("%s (%s): got cell type %v, want a string", cell(h), h, typ)
			}
		}
		checkMoney(t, f, "Review", cell("Local Amount"), "99.80", "99.80", "#,##0.00")
		checkMoney(t, f, "Review", cell("Channel Amount"), "100.80", "100.80", "#,##0.00")
		checkMoney(t, f, "Review", cell("Difference"), "1.00", "1.00", "#,##0.00")
		typ, err := f.GetCellType("Review", cell("Version"))
		if err != nil {
			t.Fatal(err)
		}
		if typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
			t.Errorf("Version: got cell type %v, want a number", typ)
		}
		if got := cellValue(t, f, "Review", cell("Version"), true); got != "0" {
			t.Errorf("Version: got %q, want 0", got)
		}
	})

	t.Run("review refs and versions", func(t *testing.T) {
		rows, err := f.GetRows("Review")
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, r := range rows[1:] {
			refs = append(refs, r[0])
			if got := r[16]; got != "0" {
				t.Errorf("%s: version %q, want 0", r[0], got)
			}
		}
		// In report order, without the auto-reversed 0006 and the pending 0009.
		want := []string{"run-1-0001", "run-1-0002", "run-1-0003", "run-1-0004", "run-1-0005", "run-1-0007", "run-1-0008", "run-1-0010"}
		if !slices.Equal(refs, want) {
			t.Errorf("got %q, want %q", refs, want)
		}
	})

	t.Run("review money by currency digits", func(t *testing.T) {
		jpy := findRow(t, f, "Review", 3, "O-400")
		checkMoney(t, f, "Review", "H"+itoa(jpy), "5000", "5,000", "#,##0")
		if got := cellValue(t, f, "Review", "I"+itoa(jpy), false); got != "" {
			t.Errorf("channel amount of missing_channel: got %q, want empty", got)
		}
		if got := cellValue(t, f, "Review", "J"+itoa(jpy), false); got != "" {
			t.Errorf("difference without a channel side: got %q, want empty", got)
		}
		kwd := findRow(t, f, "Review", 3, "O-700")
		checkMoney(t, f, "Review", "I"+itoa(kwd), "1.234", "1.234", "#,##0.000")
		checkMoney(t, f, "Review", "J"+itoa(kwd), "0.234", "0.234", "#,##0.000")
		big := findRow(t, f, "Review", 5, hostileAt)
		checkMoney(t, f, "Review", "I"+itoa(big), "1234.56", "1,234.56", "#,##0.00")
		if got := cellValue(t, f, "Review", "J"+itoa(big), false); got != "" {
			t.Errorf("difference without a local side: got %q, want empty", got)
		}
		usd := findRow(t, f, "Review", 3, "O-950")
		if got, want := cellValue(t, f, "Review", "B"+itoa(usd), false), "duplicate_vanished"; got != want {
			t.Errorf("category: got %q, want %q", got, want)
		}
		checkMoney(t, f, "Review", "I"+itoa(usd), "15.00", "15.00", "#,##0.00")
		checkMoney(t, f, "Review", "J"+itoa(usd), "0.00", "0.00", "#,##0.00")
	})

	t.Run("unrecognized row names its kind", func(t *testing.T) {
		r := findRow(t, f, "Review", 3, "O-800")
		if got, want := cellValue(t, f, "Review", "M"+itoa(r), false), "row kind: REVOKED"; got != want {
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
		if got, want := dv.Sqref, "N2:N"+itoa(res.NeedsReview()+1); got != want {
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
		for _, sheet := range []string{"Review", "Pending", "Auto-reversed"} {
			p, err := f.GetPanes(sheet)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Freeze || p.YSplit != 1 || p.TopLeftCell != "A2" {
				t.Errorf("%s panes: got %+v, want frozen at A2", sheet, p)
			}
		}
	})

	t.Run("column widths", func(t *testing.T) {
		for sheet, want := range map[string]map[string]float64{
			"Review":  {"A": 32, "B": 18, "M": 70, "N": 14, "O": 18, "P": 40, "Q": 9},
			"Pending": {"A": 32, "E": 15, "G": 20, "H": 70},
		} {
			for col, w := range want {
				got, err := f.GetColWidth(sheet, col)
				if err != nil {
					t.Fatal(err)
				}
				if got != w {
					t.Errorf("%s column %s: got width %v, want %v", sheet, col, got, w)
				}
			}
		}
	})

	t.Run("autofilter and no formulas", func(t *testing.T) {
		for part, want := range map[string]string{
			"xl/worksheets/sheet2.xml": "A1:R" + itoa(res.NeedsReview()+1), // Review
			"xl/worksheets/sheet3.xml": "A1:H2",                            // Pending
		} {
			xml := sheetXML(t, path, part)
			m := regexp.MustCompile(`<autoFilter ref="([^"]*)"`).FindStringSubmatch(xml)
			if m == nil {
				t.Fatalf("got no <autoFilter> in %s", part)
			}
			if got := strings.ReplaceAll(m[1], "$", ""); got != want {
				t.Errorf("%s autofilter range: got %q, want %q", part, got, want)
			}
			if !strings.Contains(xml, `<pane `) || !strings.Contains(xml, `state="frozen"`) {
				t.Errorf("got no frozen pane in %s", part)
			}
		}
		if xml := sheetXML(t, path, "xl/worksheets/sheet2.xml"); !strings.Contains(xml, "<dataValidation ") {
			t.Fatalf("sheet2.xml is not the Review sheet:\n%s", xml)
		}
		for i := 1; i <= 5; i++ {
			part := "xl/worksheets/sheet" + itoa(i) + ".xml"
			if x := sheetXML(t, path, part); strings.Contains(x, "<f>") || strings.Contains(x, "<f ") {
				t.Errorf("%s holds a formula", part)
			}
		}
	})

	t.Run("pending rows", func(t *testing.T) {
		rows, err := f.GetRows("Pending")
		if err != nil {
			t.Fatal(err)
		}
		want := [][]string{
			{"Finding", "Order No", "Refund No", "Local Txn ID", "Local Amount", "Currency", "Settled At", "Hint"},
			{"run-1-0009", "O-900", "", "4200000900", "30.00", "CNY", "2026-11-28 23:58:30",
				"Paid 90 seconds before the cut-off: expected in the 2026-11-29 file."},
		}
		if len(rows) != len(want) {
			t.Fatalf("got %d rows %q, want %d", len(rows), rows, len(want))
		}
		for i := range want {
			if !slices.Equal(rows[i], want[i]) {
				t.Errorf("row %d: got %q, want %q", i+1, rows[i], want[i])
			}
		}
		checkMoney(t, f, "Pending", "E2", "30.00", "30.00", "#,##0.00")
		for _, cell := range []string{"A2", "B2", "D2", "F2", "G2", "H2"} {
			typ, err := f.GetCellType("Pending", cell)
			if err != nil {
				t.Fatal(err)
			}
			if typ != excelize.CellTypeSharedString && typ != excelize.CellTypeInlineString {
				t.Errorf("%s: got cell type %v, want a string", cell, typ)
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
			"Channel rows": "17", "Local rows": "15", "Auto reversed": "1", "Needs review": "8", "Journals": "1",
		} {
			r := findRow(t, f, "Summary", 1, label)
			if got := cellValue(t, f, "Summary", "B"+itoa(r), false); got != want {
				t.Errorf("%s: got %q, want %q", label, got, want)
			}
		}
		r := findRow(t, f, "Summary", 1, "Money at risk (JPY)")
		checkMoney(t, f, "Summary", "B"+itoa(r), "5000", "5,000", "#,##0")
		r = findRow(t, f, "Summary", 1, "Money at risk (USD)")
		checkMoney(t, f, "Summary", "B"+itoa(r), "15.00", "15.00", "#,##0.00")
	})

	t.Run("summary categories", func(t *testing.T) {
		rows, err := f.GetRows("Summary")
		if err != nil {
			t.Fatal(err)
		}
		type line struct{ cur, count, channel, local, risk string }
		got := map[string][]line{}
		desc := map[string]string{}
		for _, r := range rows {
			r = append(r, make([]string, 7)...)
			if r[0] == "Money at risk by category" {
				break // the next table (TestWorkbookCharts)
			}
			if reconcile.Category(r[0]) == "" || !slices.Contains(reconcile.Categories, reconcile.Category(r[0])) {
				continue
			}
			got[r[0]] = append(got[r[0]], line{r[1], r[2], r[3], r[4], r[5]})
			if len(got[r[0]]) == 1 {
				desc[r[0]] = r[6]
			}
			if r[6] == "" && len(got[r[0]]) == 1 {
				t.Errorf("%s: no description", r[0])
			}
		}
		want := map[string][]line{
			"matched":            {{"", "10", "", "", ""}},
			"amount_mismatch":    {{"CNY", "1", "100.80", "99.80", "1.00"}, {"KWD", "1", "1.234", "1.000", "0.234"}},
			"status_mismatch":    {{"CNY", "1", "50.00", "50.00", "50.00"}},
			"missing_local":      {{"CNY", "1", "1,234.56", "", "1,234.56"}},
			"missing_channel":    {{"JPY", "1", "", "5,000", "5,000"}},
			"duplicate_payment":  {{"CNY", "1", "20.00", "20.00", "0.00"}},
			"duplicate_refund":   {{"CNY", "1", "99.80", "", "99.80"}},
			"unrecognized":       {{"CNY", "1", "3.00", "", "3.00"}},
			"pending":            {{"CNY", "1", "", "30.00", "0.00"}},
			"duplicate_vanished": {{"USD", "1", "15.00", "15.00", "15.00"}},
			// none of tonight's: counted at zero, with no line per currency
			"over_refund":                 {{"", "0", "", "", ""}},
			"suspected_duplicate_refund":  {{"", "0", "", "", ""}},
			"suspected_duplicate_payment": {{"", "0", "", "", ""}},
			"fee_mismatch":                {{"", "0", "", "", ""}},
			"order_mismatch":              {{"", "0", "", "", ""}},
			"refund_currency_mismatch":    {{"", "0", "", "", ""}},
			"chargeback":                  {{"", "0", "", "", ""}},
			"dispute_mismatch":            {{"", "0", "", "", ""}},
			"refund_reversed":             {{"", "0", "", "", ""}},
		}
		for _, c := range reconcile.Categories {
			if !slices.Equal(got[string(c)], want[string(c)]) {
				t.Errorf("%s: got %+v, want %+v", c, got[string(c)], want[string(c)])
			}
		}
		for c, want := range map[string]string{
			"pending":            "Settled by us just before the day's cut-off and not in this file: expected in the next day's file; becomes missing_channel if it is not there.",
			"duplicate_vanished": "A duplicate an earlier run of this date reversed is not in the corrected file: its journal stands until a person decides.",
		} {
			if desc[c] != want {
				t.Errorf("%s description: got %q, want %q", c, desc[c], want)
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

// TestWorkbookHostileText: a value that starts like a formula is stored
// exactly, in a string cell, with the quote-prefix style that keeps it text
// when a person edits the cell; a value that does not gets no such style.
func TestWorkbookHostileText(t *testing.T) {
	tests := []struct {
		name, value string
		quoted      bool
	}{
		{"sum", "=1+2", true},
		{"hyperlink formula", hostileFormula, true},
		{"at function", hostileAt, true},
		{"plus", "+1+cmd|' /C calc'!A0", true},
		{"minus", "-2+3", true},
		{"tab", "\t=1+1", true},
		{"carriage return", "\r=1+1", true},
		{"plain", "O-1=2", false},
		{"apostrophe", "'=1+2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := testResult(t)
			res.Findings = []reconcile.Finding{{
				Ref: "run-1-0001", Category: reconcile.MissingLocal, Kind: reconcile.KindRefund,
				OrderNo: tt.value, RefundNo: tt.value, ChannelTxnID: tt.value, Hint: tt.value,
				HasChannel: true, ChannelAmount: 100, Currency: "CNY",
			}, {
				Ref: "run-1-0002", Category: reconcile.Pending, Kind: reconcile.KindRefund,
				OrderNo: tt.value, RefundNo: tt.value, LocalTxnID: tt.value, Hint: tt.value,
				HasLocal: true, LocalAmount: 100, LocalCurrency: "CNY",
			}, {
				Ref: "run-1-0003", Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment,
				OrderNo: tt.value, ChannelTxnID: tt.value, OriginalTxnID: tt.value,
				HasChannel: true, ChannelAmount: 100, Currency: "CNY", AutoReverse: true,
			}}
			res.Run.File = "/in/" + tt.value
			res.Run.Error = tt.value
			f, path := writeAndOpen(t, res)
			cells := map[string][]string{
				"Review":        {"C2", "D2", "E2", "M2"},
				"Pending":       {"B2", "C2", "D2", "H2"},
				"Auto-reversed": {"B2", "D2", "E2"},
				"Summary":       {"B" + itoa(findRow(t, f, "Summary", 1, "Error"))},
			}
			if !strings.Contains(tt.value, "/") { // the workbook shows the base name of the file
				cells["Summary"] = append(cells["Summary"], "B"+itoa(findRow(t, f, "Summary", 1, "File")))
			}
			for sheet, cells := range cells {
				for _, cell := range cells {
					checkText(t, f, sheet, cell, tt.value)
					if got := quotePrefixed(t, f, sheet, cell); got != tt.quoted {
						t.Errorf("%s!%s: quote prefix %v, want %v", sheet, cell, got, tt.quoted)
					}
				}
			}
			// The quote prefix is a style of its own: the plain cells beside
			// a quoted one keep the style they had.
			if quotePrefixed(t, f, "Review", "B2") || quotePrefixed(t, f, "Review", "A1") {
				t.Error("a plain cell has the quote prefix")
			}
			// xsd:boolean: Excel writes "1", encoding/xml "true".
			if got := regexp.MustCompile(`quotePrefix="(1|true)"`).MatchString(sheetXML(t, path, "xl/styles.xml")); got != tt.quoted {
				t.Errorf("styles.xml: a quotePrefix xf: %v, want %v", got, tt.quoted)
			}
		})
	}
}

// checkText checks that cell is a string cell holding exactly want, with no
// formula.
func checkText(t *testing.T, f *excelize.File, sheet, cell, want string) {
	t.Helper()
	typ, err := f.GetCellType(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	if typ != excelize.CellTypeSharedString && typ != excelize.CellTypeInlineString {
		t.Errorf("%s!%s: got cell type %v, want a string", sheet, cell, typ)
	}
	if formula, err := f.GetCellFormula(sheet, cell); err != nil || formula != "" {
		t.Errorf("%s!%s: got formula %q (%v), want none", sheet, cell, formula, err)
	}
	if got := cellValue(t, f, sheet, cell, true); got != want {
		t.Errorf("%s!%s: got %q, want %q", sheet, cell, got, want)
	}
}

// quotePrefixed reports whether the style of cell has the quote prefix
// (quotePrefix="1" on its xf in styles.xml), read from the reopened file.
func quotePrefixed(t *testing.T, f *excelize.File, sheet, cell string) bool {
	t.Helper()
	id, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	xfs := f.Styles.CellXfs.Xf
	if id < 0 || id >= len(xfs) {
		t.Fatalf("%s!%s: style %d of %d", sheet, cell, id, len(xfs))
	}
	return xfs[id].QuotePrefix != nil && *xfs[id].QuotePrefix
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
