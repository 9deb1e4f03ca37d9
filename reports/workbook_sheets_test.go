package reports_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/reports"
)

var reviewHeader = []string{"Finding", "Category", "Order No", "Refund No", "Channel Txn ID", "Original Txn ID", "Local Txn ID",
	"Local Amount", "Channel Amount", "Difference", "Currency", "Time", "Hint", "Decision", "Reviewer", "Note", "Version", "Related"}

// manyLines is testResult with n findings that need review, refs
// run-1-0001 to run-1-n in report order, with a finding that needs no
// review (one auto-reversed, one pending) after every fourth, which must
// not take a line. Line i (0-based) is about order O-<i>, amount
// 100.00+i CNY on the channel side and 99.00 on ours; a few carry
// values that test the cell rules.
func manyLines(t testing.TB, n int) *reconcile.Result {
	t.Helper()
	res := testResult(t)
	at := time.Date(2026, 11, 28, 10, 15, 0, 0, time.UTC)
	fs := make([]reconcile.Finding, 0, n+n/2)
	for i := range n {
		fs = append(fs, reconcile.Finding{
			Ref: fmt.Sprintf("run-1-%04d", i+1), Category: reconcile.AmountMismatch, Kind: reconcile.KindPayment,
			OrderNo: fmt.Sprintf("O-%d", i), ChannelTxnID: fmt.Sprintf("42%08d", i), LocalTxnID: fmt.Sprintf("42%08d", i),
			HasChannel: true, ChannelAmount: 10000 + int64(i), Currency: "CNY",
			HasLocal: true, LocalAmount: 9900, LocalCurrency: "CNY",
			OccurredAt: at, Hint: "金额不一致: the channel took more than we recorded.",
		})
		if i%4 == 3 {
			fs = append(fs, reconcile.Finding{
				Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment, OrderNo: fmt.Sprintf("A-%d", i),
				ChannelTxnID: "dup", HasChannel: true, ChannelAmount: 100, Currency: "CNY", AutoReverse: true,
			}, reconcile.Finding{
				Category: reconcile.Pending, Kind: reconcile.KindPayment, OrderNo: fmt.Sprintf("P-%d", i),
				HasLocal: true, LocalAmount: 100, LocalCurrency: "CNY",
			})
		}
	}
	res.Findings = fs
	res.Journals = nil
	return res
}

func TestWorkbookReviewSheets(t *testing.T) {
	res := manyLines(t, 12)
	// Line 7, the second of Review 2: every cell rule on one line.
	l := &res.Findings[slices.IndexFunc(res.Findings, func(f reconcile.Finding) bool { return f.Ref == "run-1-0007" })]
	l.Category, l.Kind = reconcile.AmountMismatch, reconcile.KindRefund
	l.OrderNo, l.RefundNo, l.ChannelTxnID, l.OriginalTxnID, l.LocalTxnID = hostileFormula, "R-7", hostileAt, "", "-7"
	l.ChannelAmount, l.Currency, l.LocalAmount, l.LocalCurrency = 1234, "KWD", 1334, "KWD"
	l.Hint = "The channel refunded 0.100 less than we recorded."

	dir := t.TempDir()
	path := filepath.Join(dir, reports.WorkbookName(res.Run.Channel, res.Run.Day))
	info, err := reports.WriteWorkbookWith(path, res, reports.WorkbookOptions{SheetLines: 5})
	if err != nil {
		t.Fatalf("WriteWorkbookWith: %v", err)
	}
	sheets := []string{"Summary", "Review", "Review 2", "Review 3", "Pending", "Auto-reversed", "Trend"}
	want := reports.WorkbookInfo{ReviewLines: 12, InWorkbook: 12, Sheets: sheets}
	if info.ReviewLines != want.ReviewLines || info.InWorkbook != want.InWorkbook || info.CSV != want.CSV ||
		!slices.Equal(info.Sheets, want.Sheets) {
		t.Errorf("info: got %+v, want %+v", info, want)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	t.Run("sheets in order", func(t *testing.T) {
		if got := f.GetSheetList(); !slices.Equal(got, sheets) {
			t.Errorf("got %q, want %q", got, sheets)
		}
	})

	t.Run("lines per sheet", func(t *testing.T) {
		var refs []string
		for sheet, n := range map[string]int{"Review": 5, "Review 2": 5, "Review 3": 2} {
			rows, err := f.GetRows(sheet)
			if err != nil {
				t.Fatal(err)
			}
			if got := rows[0]; !slices.Equal(got, reviewHeader) {
				t.Errorf("%s header: got %q, want %q", sheet, got, reviewHeader)
			}
			if got := len(rows) - 1; got != n {
				t.Errorf("%s: got %d lines, want %d", sheet, got, n)
			}
		}
		for _, sheet := range []string{"Review", "Review 2", "Review 3"} {
			rows, _ := f.GetRows(sheet)
			for _, r := range rows[1:] {
				refs = append(refs, r[0])
			}
		}
		var wantRefs []string
		for i := range 12 {
			wantRefs = append(wantRefs, fmt.Sprintf("run-1-%04d", i+1))
		}
		if !slices.Equal(refs, wantRefs) {
			t.Errorf("refs over the sheets: got %q, want %q", refs, wantRefs)
		}
	})

	t.Run("each sheet a table of its own", func(t *testing.T) {
		filters := map[string]string{}
		for _, dn := range f.GetDefinedName() {
			if dn.Name == "_xlnm._FilterDatabase" {
				filters[dn.Scope] = strings.ReplaceAll(dn.RefersTo, "$", "")
			}
		}
		for _, tt := range []struct{ sheet, last string }{{"Review", "6"}, {"Review 2", "6"}, {"Review 3", "3"}} {
			dvs, err := f.GetDataValidations(tt.sheet)
			if err != nil {
				t.Fatal(err)
			}
			if len(dvs) != 1 {
				t.Fatalf("%s: got %d data validations, want 1", tt.sheet, len(dvs))
			}
			if got, want := dvs[0].Sqref, "N2:N"+tt.last; got != want {
				t.Errorf("%s dropdown: got %q, want %q", tt.sheet, got, want)
			}
			if got, want := dvs[0].Formula1, `"approve,reject,investigate"`; got != want {
				t.Errorf("%s choices: got %s, want %s", tt.sheet, got, want)
			}
			p, err := f.GetPanes(tt.sheet)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Freeze || p.YSplit != 1 || p.TopLeftCell != "A2" {
				t.Errorf("%s panes: got %+v, want frozen at A2", tt.sheet, p)
			}
			if got, want := filters[tt.sheet], "'"+tt.sheet+"'!A1:R"+tt.last; got != want && got != tt.sheet+"!A1:R"+tt.last {
				t.Errorf("%s autofilter: got %q, want %q", tt.sheet, got, want)
			}
			for col, w := range map[string]float64{"A": 32, "M": 70, "N": 14, "Q": 9} {
				if got, err := f.GetColWidth(tt.sheet, col); err != nil || got != w {
					t.Errorf("%s column %s: got width %v (%v), want %v", tt.sheet, col, got, err, w)
				}
			}
		}
	})

	t.Run("one line of Review 2 cell by cell", func(t *testing.T) {
		const sheet = "Review 2"
		for h, want := range map[string]string{
			"Finding": "run-1-0007", "Category": "amount_mismatch", "Order No": hostileFormula, "Refund No": "R-7",
			"Channel Txn ID": hostileAt, "Original Txn ID": "", "Local Txn ID": "-7",
			"Currency": "KWD", "Time": "2026-11-28 18:15:00", "Hint": "The channel refunded 0.100 less than we recorded.",
			"Decision": "", "Reviewer": "", "Note": "",
		} {
			cell := reviewCols[h] + "3"
			if got := cellValue(t, f, sheet, cell, false); got != want {
				t.Errorf("%s (%s): got %q, want %q", cell, h, got, want)
			}
			if want == "" {
				continue
			}
			typ, err := f.GetCellType(sheet, cell)
			if err != nil {
				t.Fatal(err)
			}
			if typ != excelize.CellTypeSharedString && typ != excelize.CellTypeInlineString {
				t.Errorf("%s (%s): got cell type %v, want a string", cell, h, typ)
			}
			if formula, _ := f.GetCellFormula(sheet, cell); formula != "" {
				t.Errorf("%s (%s): got formula %q", cell, h, formula)
			}
		}
		for h, want := range map[string]bool{"Order No": true, "Channel Txn ID": true, "Local Txn ID": true, "Refund No": false, "Hint": false} {
			if got := quotePrefixed(t, f, sheet, reviewCols[h]+"3"); got != want {
				t.Errorf("%s: quote prefix %v, want %v", h, got, want)
			}
		}
		checkMoney(t, f, sheet, "H3", "1.334", "1.334", "#,##0.000")
		checkMoney(t, f, sheet, "I3", "1.234", "1.234", "#,##0.000")
		checkMoney(t, f, sheet, "J3", "-0.100", "-0.100", "#,##0.000")
		if got := cellValue(t, f, sheet, "Q3", true); got != "0" {
			t.Errorf("Version: got %q, want 0", got)
		}
	})

	t.Run("summary says where the lines are", func(t *testing.T) {
		r := findRow(t, f, "Summary", 1, "Review lines")
		want := "All 12 lines that need review are in this workbook. The workbook's lines are on the sheets Review, Review 2, Review 3."
		if got := cellValue(t, f, "Summary", "B"+itoa(r), false); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})

	t.Run("no CSV when all lines fit", func(t *testing.T) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Errorf("got %d files in the directory, want the workbook alone", len(entries))
		}
	})

	t.Run("decisions from every Review sheet", func(t *testing.T) {
		path := editCopy(t, path, func(f *excelize.File) {
			setOn(t, f, "Review", map[string]any{"N2": "approve"})
			setOn(t, f, "Review 3", map[string]any{"N2": "reject", "O2": "li.wei", "N3": " Investigate", "P3": "asked WeChat"})
		})
		got, err := reports.ReadDecisions(path)
		if err != nil {
			t.Fatalf("ReadDecisions: %v", err)
		}
		want := []reports.Decision{
			{Sheet: "Review", Row: 2, Ref: "run-1-0001", Decision: "approve"},
			{Sheet: "Review 3", Row: 2, Ref: "run-1-0011", Decision: "reject", Reviewer: "li.wei"},
			{Sheet: "Review 3", Row: 3, Ref: "run-1-0012", Decision: "investigate", Note: "asked WeChat"},
		}
		if !slices.Equal(got, want) {
			t.Errorf("got  %+v\nwant %+v", got, want)
		}
	})

	t.Run("tabs moved", func(t *testing.T) {
		path := editCopy(t, path, func(f *excelize.File) {
			if err := f.MoveSheet("Review 3", "Summary"); err != nil {
				t.Fatal(err)
			}
			setOn(t, f, "Review", map[string]any{"N2": "approve"})
			setOn(t, f, "Review 3", map[string]any{"N2": "reject"})
		})
		got, err := reports.ReadDecisions(path)
		if err != nil {
			t.Fatalf("ReadDecisions: %v", err)
		}
		var refs []string
		for _, d := range got {
			refs = append(refs, d.Sheet+" "+d.Ref)
		}
		if want := []string{"Review run-1-0001", "Review 3 run-1-0011"}; !slices.Equal(refs, want) {
			t.Errorf("got %q, want %q", refs, want)
		}
	})

	t.Run("bad lines name their sheet", func(t *testing.T) {
		path := editCopy(t, path, func(f *excelize.File) {
			setOn(t, f, "Review", map[string]any{"N2": "approve"})
			setOn(t, f, "Review 2", map[string]any{"N4": "maybe"})
			setOn(t, f, "Review 3", map[string]any{"A3": "run-1-0001", "N3": "reject"})
		})
		_, err := reports.ReadDecisions(path)
		if err == nil {
			t.Fatal("got no error")
		}
		var at []string
		for _, e := range unjoin(err) {
			var pe *reconcile.ParseError
			if !errors.As(e, &pe) {
				t.Fatalf("got %T %v, want a *reconcile.ParseError", e, e)
			}
			at = append(at, fmt.Sprintf("%d %s", pe.Line, pe.Column))
		}
		if want := []string{"4 Decision", "3 Finding"}; !slices.Equal(at, want) {
			t.Errorf("errors at %q, want %q", at, want)
		}
		for _, says := range []string{"sheet Review 2: unknown decision", `sheet Review 3: finding "run-1-0001" already decided on row 2 of sheet Review`} {
			if !strings.Contains(err.Error(), says) {
				t.Errorf("got %q, want it to say %q", err, says)
			}
		}
	})
}

// editCopy copies the workbook at path, lets edit change the copy as a
// person would, saves it and returns its path.
func editCopy(t *testing.T, path string, edit func(f *excelize.File)) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	edit(f)
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	return cp
}

func setOn(t *testing.T, f *excelize.File, sheet string, cells map[string]any) {
	t.Helper()
	for cell, v := range cells {
		if err := f.SetCellValue(sheet, cell, v); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWorkbookMaxLines(t *testing.T) {
	res := manyLines(t, 10)
	// Values for the CSV's cell rules: hostile text, three currencies, a
	// negative difference, a line without a local side.
	hostile := []struct{ ref, order string }{
		{"run-1-0002", hostileFormula}, {"run-1-0003", "+1+cmd|' /C calc'!A0"}, {"run-1-0004", "-2+3"},
		{"run-1-0005", "\t=1+1"}, {"run-1-0006", "\r=1+1"}, {"run-1-0007", hostileAt}, {"run-1-0008", "O-1=2"},
	}
	for i := range res.Findings {
		l := &res.Findings[i]
		for _, h := range hostile {
			if l.Ref == h.ref {
				l.OrderNo = h.order
			}
		}
		switch l.Ref {
		case "run-1-0001":
			l.ChannelAmount, l.LocalAmount = 9880, 9980 // a difference of -1.00
		case "run-1-0009":
			l.ChannelAmount, l.Currency, l.LocalAmount, l.LocalCurrency = 1234, "KWD", 1000, "KWD"
		case "run-1-0010":
			l.Category, l.HasLocal, l.LocalAmount, l.LocalCurrency = reconcile.MissingLocal, false, 0, ""
			l.ChannelAmount, l.Currency = 5000, "JPY"
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, reports.WorkbookName(res.Run.Channel, res.Run.Day))
	info, err := reports.WriteWorkbookWith(path, res, reports.WorkbookOptions{MaxLines: 4})
	if err != nil {
		t.Fatalf("WriteWorkbookWith: %v", err)
	}
	const csvName = "review-wechatpay-2026-11-28.csv"
	if info.ReviewLines != 10 || info.InWorkbook != 4 || info.CSV != csvName ||
		!slices.Equal(info.Sheets, []string{"Summary", "Review", "Pending", "Auto-reversed", "Trend"}) {
		t.Errorf("info: got %+v, want 10 lines, 4 in the workbook, %s, one Review sheet", info, csvName)
	}

	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	t.Run("workbook holds the first lines", func(t *testing.T) {
		rows, err := f.GetRows("Review")
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, r := range rows[1:] {
			refs = append(refs, r[0])
		}
		if want := []string{"run-1-0001", "run-1-0002", "run-1-0003", "run-1-0004"}; !slices.Equal(refs, want) {
			t.Errorf("got %q, want %q", refs, want)
		}
		dvs, err := f.GetDataValidations("Review")
		if err != nil || len(dvs) != 1 || dvs[0].Sqref != "N2:N5" {
			t.Errorf("dropdown: got %+v (%v), want one over N2:N5", dvs, err)
		}
	})

	t.Run("summary names the CSV", func(t *testing.T) {
		r := findRow(t, f, "Summary", 1, "Review lines")
		want := "This workbook holds the first 4 of 10 lines that need review; all 10 are in " + csvName + "."
		if got := cellValue(t, f, "Summary", "B"+itoa(r), false); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		r = findRow(t, f, "Summary", 1, "Needs review")
		if got := cellValue(t, f, "Summary", "B"+itoa(r), false); got != "10" {
			t.Errorf("needs review: got %q, want 10, all of them", got)
		}
	})

	t.Run("CSV holds every line", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(dir, csvName))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("Finding,Category,")) {
			t.Errorf("got %q at the start, want the header with no byte-order mark", b[:min(len(b), 20)])
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 11 {
			t.Fatalf("got %d records, want a header and 10 lines", len(recs))
		}
		if !slices.Equal(recs[0], reviewHeader) {
			t.Errorf("header: got %q, want %q", recs[0], reviewHeader)
		}
		byRef := map[string]map[string]string{}
		for i, rec := range recs[1:] {
			if want := fmt.Sprintf("run-1-%04d", i+1); rec[0] != want {
				t.Errorf("line %d: got %s, want %s", i+1, rec[0], want)
			}
			m := map[string]string{}
			for j, h := range reviewHeader {
				m[h] = rec[j]
			}
			byRef[rec[0]] = m
		}
		for _, tt := range []struct{ ref, col, want string }{
			{"run-1-0001", "Local Amount", "99.80"},
			{"run-1-0001", "Channel Amount", "98.80"},
			{"run-1-0001", "Difference", "-1.00"},
			{"run-1-0001", "Currency", "CNY"},
			{"run-1-0001", "Time", "2026-11-28 18:15:00"},
			{"run-1-0001", "Hint", "金额不一致: the channel took more than we recorded."},
			{"run-1-0001", "Decision", ""},
			{"run-1-0001", "Version", "0"},
			{"run-1-0002", "Order No", "'" + hostileFormula},
			{"run-1-0003", "Order No", "'+1+cmd|' /C calc'!A0"},
			{"run-1-0004", "Order No", "'-2+3"},
			{"run-1-0005", "Order No", "'\t=1+1"},
			{"run-1-0006", "Order No", "'\r=1+1"},
			{"run-1-0007", "Order No", "'" + hostileAt},
			{"run-1-0008", "Order No", "O-1=2"},
			{"run-1-0008", "Channel Amount", "100.07"},
			{"run-1-0009", "Local Amount", "1.000"},
			{"run-1-0009", "Channel Amount", "1.234"},
			{"run-1-0009", "Difference", "0.234"},
			{"run-1-0010", "Category", "missing_local"},
			{"run-1-0010", "Local Amount", ""},
			{"run-1-0010", "Channel Amount", "5000"},
			{"run-1-0010", "Difference", ""},
			{"run-1-0010", "Currency", "JPY"},
		} {
			if got := byRef[tt.ref][tt.col]; got != tt.want {
				t.Errorf("%s %s: got %q, want %q", tt.ref, tt.col, got, tt.want)
			}
		}
	})

	t.Run("summary.json", func(t *testing.T) {
		s := reports.NewSummary(res, filepath.Base(path))
		s.SetWorkbook(info)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["review_lines"] != 10.0 || m["review_csv"] != csvName {
			t.Errorf("got review_lines %v, review_csv %v, want 10 and %s", m["review_lines"], m["review_csv"], csvName)
		}
	})

	t.Run("nothing else in the directory", func(t *testing.T) {
		var names []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := []string{csvName, filepath.Base(path)}; !slices.Equal(names, want) {
			t.Errorf("got %q, want %q", names, want)
		}
	})

	t.Run("a later run that fits removes the CSV", func(t *testing.T) {
		info, err := reports.WriteWorkbookWith(path, res, reports.WorkbookOptions{MaxLines: 10})
		if err != nil {
			t.Fatal(err)
		}
		if info.CSV != "" || info.InWorkbook != 10 {
			t.Errorf("info: got %+v, want all 10 lines and no CSV", info)
		}
		if _, err := os.Stat(filepath.Join(dir, csvName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale CSV: got %v, want it gone", err)
		}
		s := reports.NewSummary(res, filepath.Base(path))
		s.SetWorkbook(info)
		b, _ := json.Marshal(s)
		if bytes.Contains(b, []byte("review_csv")) || !bytes.Contains(b, []byte(`"review_lines":10`)) {
			t.Errorf("got %s, want review_lines 10 and no review_csv", b)
		}
	})
}

func TestWorkbookLayout(t *testing.T) {
	tests := []struct {
		name                  string
		lines, max, sheetSize int
		want                  map[string]int // lines per Review sheet
		csv                   bool
	}{
		{"no lines", 0, 0, 0, map[string]int{"Review": 0}, false},
		{"one full sheet", 5, 0, 5, map[string]int{"Review": 5}, false},
		{"one line over", 6, 0, 5, map[string]int{"Review": 5, "Review 2": 1}, false},
		{"exactly max", 10, 10, 0, map[string]int{"Review": 10}, false},
		{"sheets and a CSV", 12, 7, 5, map[string]int{"Review": 5, "Review 2": 2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := manyLines(t, tt.lines)
			dir := t.TempDir()
			path := filepath.Join(dir, "review.xlsx")
			info, err := reports.WriteWorkbookWith(path, res, reports.WorkbookOptions{MaxLines: tt.max, SheetLines: tt.sheetSize})
			if err != nil {
				t.Fatal(err)
			}
			f, err := excelize.OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got := map[string]int{}
			for _, sheet := range f.GetSheetList() {
				if sheet == "Review" || strings.HasPrefix(sheet, "Review ") {
					rows, err := f.GetRows(sheet)
					if err != nil {
						t.Fatal(err)
					}
					got[sheet] = len(rows) - 1
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("lines per sheet: got %v, want %v", got, tt.want)
			}
			if (info.CSV != "") != tt.csv {
				t.Errorf("CSV: got %q, want one: %v", info.CSV, tt.csv)
			}
			if _, err := os.Stat(filepath.Join(dir, "review-wechatpay-2026-11-28.csv")); (err == nil) != tt.csv {
				t.Errorf("CSV file: got %v, want one: %v", err, tt.csv)
			}
		})
	}

	for _, opts := range []reports.WorkbookOptions{{MaxLines: -1}, {SheetLines: -1}, {SheetLines: 1_048_576}} {
		path := filepath.Join(t.TempDir(), "review.xlsx")
		if _, err := reports.WriteWorkbookWith(path, manyLines(t, 1), opts); err == nil {
			t.Errorf("%+v: got no error", opts)
		} else if _, err := os.Stat(path); err == nil {
			t.Errorf("%+v: got a workbook with the error", opts)
		}
	}
}

// BenchmarkWorkbookLarge writes a run with 300,000 lines that need review
// into a workbook that holds 50,000 of them, with the CSV export of all,
// and reports the peak heap above what the Result itself takes.
func BenchmarkWorkbookLarge(b *testing.B) {
	const lines, maxLines = 300_000, 50_000
	res := manyLines(b, lines)
	dir := b.TempDir()
	path := filepath.Join(dir, reports.WorkbookName(res.Run.Channel, res.Run.Day))
	var peak, base uint64
	start := time.Now()
	for b.Loop() {
		p, bs, err := peakHeap(func() error {
			_, err := reports.WriteWorkbookWith(path, res, reports.WorkbookOptions{MaxLines: maxLines})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		peak, base = max(peak, p), bs
	}
	b.ReportMetric(float64(peak-base)/(1<<20), "peak-MB")
	b.ReportMetric(float64(base)/(1<<20), "result-MB")
	b.ReportMetric(float64(lines)*float64(b.N)/time.Since(start).Seconds(), "lines/s")
}

// peakHeap runs step and samples the live heap while it runs: the peak,
// and the heap before it started.
func peakHeap(step func() error) (peak, base uint64, err error) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak = ms.HeapAlloc, ms.HeapAlloc
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	err = step()
	close(done)
	wg.Wait()
	return peak, base, err
}

// TestWorkbookListSheetsContinue: pending and reversed findings past what
// a sheet holds go on to numbered sheets of their own, every one listed
// once, so no sheet has more lines than Excel opens.
func TestWorkbookListSheetsContinue(t *testing.T) {
	res := manyLines(t, 12) // 3 reversed and 3 pending findings among them
	path := filepath.Join(t.TempDir(), reports.WorkbookName(res.Run.Channel, res.Run.Day))
	info, err := reports.WriteWorkbookWith(path, res, reports.WorkbookOptions{SheetLines: 2})
	if err != nil {
		t.Fatalf("WriteWorkbookWith: %v", err)
	}
	want := []string{"Summary", "Review", "Review 2", "Review 3", "Review 4", "Review 5", "Review 6",
		"Pending", "Pending 2", "Auto-reversed", "Auto-reversed 2", "Trend"}
	if !slices.Equal(info.Sheets, want) {
		t.Fatalf("sheets: got %q, want %q", info.Sheets, want)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tt := range []struct {
		sheets []string
		want   []string // the order numbers listed, in order
	}{
		{[]string{"Pending", "Pending 2"}, []string{"P-3", "P-7", "P-11"}},
		{[]string{"Auto-reversed", "Auto-reversed 2"}, []string{"A-3", "A-7", "A-11"}},
	} {
		var got []string
		for i, sheet := range tt.sheets {
			rows, err := f.GetRows(sheet)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(rows) - 1; n != []int{2, 1}[i] {
				t.Errorf("%s: %d lines, want %d", sheet, n, []int{2, 1}[i])
			}
			for _, r := range rows[1:] {
				got = append(got, r[1])
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: order numbers %q, want %q", tt.sheets, got, tt.want)
		}
	}
}
