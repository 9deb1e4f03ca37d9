package reports_test

import (
	"archive/zip"
	"encoding/xml"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/reports"
)

// chartXML is what a test reads back of a chart part: excelize writes
// charts but has no getter for them.
type chartXML struct {
	Title []string `xml:"chart>title>tx>rich>p>r>t"`
	Bar   []struct {
		Dir struct {
			Val string `xml:"val,attr"`
		} `xml:"barDir"`
		Series []seriesXML `xml:"ser"`
	} `xml:"chart>plotArea>barChart"`
	Line []struct {
		Series []seriesXML `xml:"ser"`
	} `xml:"chart>plotArea>lineChart"`
}

type seriesXML struct {
	Name   string `xml:"tx>strRef>f"`
	Cats   string `xml:"cat>strRef>f"`
	Values string `xml:"val>numRef>f"`
}

type relsXML struct {
	Rels []struct {
		ID     string `xml:"Id,attr"`
		Type   string `xml:"Type,attr"`
		Target string `xml:"Target,attr"`
	} `xml:"Relationship"`
}

// sheetCharts reads the charts drawn on a sheet straight from the xlsx
// package: workbook → sheet part → its drawing → the drawing's charts, in
// the order they were added.
func sheetCharts(t *testing.T, file, sheet string) []chartXML {
	t.Helper()
	z, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	read := func(part string, v any) bool {
		r, err := z.Open(part)
		if err != nil {
			return false
		}
		defer r.Close()
		if err := xml.NewDecoder(r).Decode(v); err != nil {
			t.Fatalf("%s: %v", part, err)
		}
		return true
	}
	// target resolves a relationship's target against the part it is of.
	target := func(from, to string) string {
		if strings.HasPrefix(to, "/") {
			return strings.TrimPrefix(to, "/")
		}
		return path.Join(path.Dir(from), to)
	}
	related := func(part, kind string) []string {
		var rels relsXML
		if !read(path.Join(path.Dir(part), "_rels", path.Base(part)+".rels"), &rels) {
			return nil
		}
		slices.SortFunc(rels.Rels, func(a, b struct {
			ID     string `xml:"Id,attr"`
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
		}) int {
			x, _ := strconv.Atoi(strings.TrimPrefix(a.ID, "rId"))
			y, _ := strconv.Atoi(strings.TrimPrefix(b.ID, "rId"))
			return x - y
		})
		var out []string
		for _, r := range rels.Rels {
			if strings.HasSuffix(r.Type, "/"+kind) {
				out = append(out, target(part, r.Target))
			}
		}
		return out
	}

	var book struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			RID  string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	read("xl/workbook.xml", &book)
	var bookRels relsXML
	read("xl/_rels/workbook.xml.rels", &bookRels)
	sheetPart := ""
	for _, s := range book.Sheets {
		for _, r := range bookRels.Rels {
			if s.Name == sheet && r.ID == s.RID {
				sheetPart = target("xl/workbook.xml", r.Target)
			}
		}
	}
	if sheetPart == "" {
		t.Fatalf("no part for sheet %s", sheet)
	}
	var out []chartXML
	for _, drawing := range related(sheetPart, "drawing") {
		for _, part := range related(drawing, "chart") {
			var c chartXML
			if !read(part, &c) {
				t.Fatalf("%s: the drawing of %s names it, but it is not in the file", part, sheet)
			}
			out = append(out, c)
		}
	}
	return out
}

// rangeCells returns what the cells of a chart's range reference hold,
// raw, row by row: what the chart draws. It opens the file afresh:
// excelize rewrites a number cell's raw text in memory once the cell has
// been read formatted.
func rangeCells(t *testing.T, file, ref string) []string {
	t.Helper()
	f, err := excelize.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheet, cells, ok := strings.Cut(strings.ReplaceAll(ref, "$", ""), "!")
	if !ok {
		t.Fatalf("reference %q has no sheet", ref)
	}
	sheet = strings.ReplaceAll(strings.Trim(sheet, "'"), "''", "'")
	from, to, ok := strings.Cut(cells, ":")
	if !ok {
		to = from
	}
	c1, r1, err := excelize.CellNameToCoordinates(from)
	if err != nil {
		t.Fatal(err)
	}
	c2, r2, err := excelize.CellNameToCoordinates(to)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r := r1; r <= r2; r++ {
		for c := c1; c <= c2; c++ {
			name, _ := excelize.CoordinatesToCellName(c, r)
			out = append(out, cellValue(t, f, sheet, name, true))
		}
	}
	return out
}

// trendOf is a day of a trend whose counts follow from n.
func trendOf(t *testing.T, date string, n int) reconcile.TrendDay {
	t.Helper()
	day, err := reconcile.NewBusinessDay(date, shanghai)
	if err != nil {
		t.Fatal(err)
	}
	return reconcile.TrendDay{Day: day, Counts: map[reconcile.Category]int{
		reconcile.Matched: 1000 + n, reconcile.AmountMismatch: n, reconcile.MissingLocal: 2 * n,
		reconcile.DuplicateVanished: n % 2,
	}}
}

func TestWorkbookCharts(t *testing.T) {
	res := testResult(t) // 2026-11-28
	var trend []reconcile.TrendDay
	for d := 13; d <= 27; d++ { // 15 earlier days: only the last 13 fit
		trend = append(trend, trendOf(t, fmt.Sprintf("2026-11-%02d", d), d))
	}
	// Not before the run's day: left out, the result's counts are the day's.
	trend = append(trend, trendOf(t, "2026-11-28", 99), trendOf(t, "2026-11-29", 98))
	path := filepath.Join(t.TempDir(), reports.WorkbookName(res.Run.Channel, res.Run.Day))
	info, err := reports.WriteWorkbookWith(path, res, reports.WorkbookOptions{Trend: trend})
	if err != nil {
		t.Fatalf("WriteWorkbookWith: %v", err)
	}
	if want := []string{"Summary", "Review", "Pending", "Auto-reversed", "Trend"}; !slices.Equal(info.Sheets, want) {
		t.Errorf("sheets: got %q, want %q", info.Sheets, want)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer f.Close()

	// The money-at-risk table, cell by cell: raw as stored, shown as
	// formatted, and the currency's number format.
	riskCats := []string{"amount_mismatch", "status_mismatch", "missing_local", "missing_channel",
		"duplicate_payment", "duplicate_refund", "over_refund", "suspected_duplicate_refund",
		"suspected_duplicate_payment", "order_mismatch", "refund_currency_mismatch", "chargeback", "dispute_mismatch", "refund_reversed", "fee_mismatch", "unrecognized",
		"duplicate_vanished"}
	currencies := []string{"CNY", "JPY", "KWD", "USD"}
	formats := map[string]string{"CNY": "#,##0.00", "JPY": "#,##0", "KWD": "#,##0.000", "USD": "#,##0.00"}
	zero := map[string]string{"CNY": "0.00", "JPY": "0", "KWD": "0.000", "USD": "0.00"}
	risk := map[string]map[string][2]string{ // category → currency → raw, shown
		"amount_mismatch":    {"CNY": {"1.00", "1.00"}, "KWD": {"0.234", "0.234"}},
		"status_mismatch":    {"CNY": {"50.00", "50.00"}},
		"missing_local":      {"CNY": {"1234.56", "1,234.56"}},
		"missing_channel":    {"JPY": {"5000", "5,000"}},
		"duplicate_refund":   {"CNY": {"99.80", "99.80"}},
		"unrecognized":       {"CNY": {"3.00", "3.00"}},
		"duplicate_vanished": {"USD": {"15.00", "15.00"}},
		// duplicate_payment: reversed automatically, nothing at risk.
	}
	title := findRow(t, f, "Summary", 1, "Money at risk by category")
	header := title + 1
	t.Run("money table", func(t *testing.T) {
		rows, err := f.GetRows("Summary")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := rows[header-1], append([]string{"Category"}, currencies...); !slices.Equal(got, want) {
			t.Errorf("header: got %q, want %q", got, want)
		}
		for i, c := range riskCats {
			r := header + 1 + i
			if got := cellValue(t, f, "Summary", "A"+itoa(r), false); got != c {
				t.Errorf("A%d: got %q, want %s", r, got, c)
			}
			for k, cur := range currencies {
				col, _ := excelize.ColumnNumberToName(k + 2)
				want, ok := risk[c][cur]
				if !ok {
					want = [2]string{zero[cur], zero[cur]}
				}
				checkMoney(t, f, "Summary", col+itoa(r), want[0], want[1], formats[cur])
			}
		}
		if n := len(rows); n > header+len(riskCats) {
			t.Errorf("Summary has %d rows, want the table to end it at %d: %q", n, header+len(riskCats), rows[header+len(riskCats):])
		}
	})

	t.Run("money charts", func(t *testing.T) {
		charts := sheetCharts(t, path, "Summary")
		if len(charts) != len(currencies) {
			t.Fatalf("got %d charts on Summary, want one per currency: %d", len(charts), len(currencies))
		}
		first, last := header+1, header+len(riskCats)
		for k, cur := range currencies {
			c := charts[k]
			col, _ := excelize.ColumnNumberToName(k + 2)
			if len(c.Bar) != 1 || c.Bar[0].Dir.Val != "col" || len(c.Line) != 0 {
				t.Fatalf("%s chart: got %+v, want one column chart", cur, c)
			}
			if got, want := strings.Join(c.Title, ""), "Money at risk by category ("+cur+")"; got != want {
				t.Errorf("%s chart title: got %q, want %q", cur, got, want)
			}
			want := []seriesXML{{
				Name:   fmt.Sprintf("Summary!$%s$%d", col, header),
				Cats:   fmt.Sprintf("Summary!$A$%d:$A$%d", first, last),
				Values: fmt.Sprintf("Summary!$%s$%d:$%s$%d", col, first, col, last),
			}}
			if got := c.Bar[0].Series; !slices.Equal(got, want) {
				t.Errorf("%s chart series: got %+v, want %+v", cur, got, want)
				continue
			}
			// What the chart draws is what the table holds.
			if got := rangeCells(t, path, want[0].Name); !slices.Equal(got, []string{cur}) {
				t.Errorf("%s series name: got %q", cur, got)
			}
			if got := rangeCells(t, path, want[0].Cats); !slices.Equal(got, riskCats) {
				t.Errorf("%s categories: got %q, want %q", cur, got, riskCats)
			}
			var values []string
			for _, cat := range riskCats {
				v, ok := risk[cat][cur]
				if !ok {
					v = [2]string{zero[cur]}
				}
				values = append(values, v[0])
			}
			if got := rangeCells(t, path, want[0].Values); !slices.Equal(got, values) {
				t.Errorf("%s values: got %q, want %q", cur, got, values)
			}
		}
	})

	// 2026-11-15 … 2026-11-27 from the trend, then the run's own day.
	wantHeader := []string{"Business Date", "matched", "amount_mismatch", "status_mismatch", "missing_local",
		"missing_channel", "duplicate_payment", "duplicate_refund", "over_refund", "suspected_duplicate_refund",
		"suspected_duplicate_payment", "order_mismatch", "refund_currency_mismatch", "chargeback", "dispute_mismatch", "refund_reversed", "fee_mismatch", "unrecognized",
		"pending", "duplicate_vanished"}
	var wantRows [][]string
	for d := 15; d <= 27; d++ {
		wantRows = append(wantRows, []string{fmt.Sprintf("2026-11-%02d", d), itoa(1000 + d), itoa(d), "0", itoa(2 * d),
			"0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", itoa(d % 2)})
	}
	wantRows = append(wantRows, []string{"2026-11-28", "10", "2", "1", "1", "1", "1", "1", "0", "0", "0", "0", "0", "0", "0", "0", "0", "1", "1", "1"})
	t.Run("trend table", func(t *testing.T) {
		rows, err := f.GetRows("Trend")
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) < 1+len(wantRows) {
			t.Fatalf("got %d rows, want %d and a note: %q", len(rows), 1+len(wantRows), rows)
		}
		if !slices.Equal(rows[0], wantHeader) {
			t.Errorf("header: got %q, want %q", rows[0], wantHeader)
		}
		for i, want := range wantRows {
			if got := rows[i+1]; !slices.Equal(got, want) {
				t.Errorf("row %d: got %q, want %q", i+2, got, want)
			}
		}
		for _, cell := range []string{"B2", "C15", "K15"} {
			typ, err := f.GetCellType("Trend", cell)
			if err != nil {
				t.Fatal(err)
			}
			if typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
				t.Errorf("Trend!%s: got cell type %v, want a number", cell, typ)
			}
		}
		note := fmt.Sprint(rows[len(wantRows)+1:])
		if want := "the 13 before it with a successful run of wechatpay"; !strings.Contains(note, want) {
			t.Errorf("note: got %q, want it to say %q", note, want)
		}
	})

	t.Run("trend chart", func(t *testing.T) {
		charts := sheetCharts(t, path, "Trend")
		if len(charts) != 1 || len(charts[0].Line) != 1 || len(charts[0].Bar) != 0 {
			t.Fatalf("got %+v, want one line chart on Trend", charts)
		}
		last := 1 + len(wantRows)
		var want []seriesXML
		for k, h := range wantHeader[1:] {
			if h == "matched" {
				continue // it would dwarf the others
			}
			col, _ := excelize.ColumnNumberToName(k + 2)
			want = append(want, seriesXML{
				Name:   fmt.Sprintf("Trend!$%s$1", col),
				Cats:   fmt.Sprintf("Trend!$A$2:$A$%d", last),
				Values: fmt.Sprintf("Trend!$%s$2:$%s$%d", col, col, last),
			})
		}
		got := charts[0].Line[0].Series
		if !slices.Equal(got, want) {
			t.Fatalf("series: got %+v, want %+v", got, want)
		}
		var dates []string
		for _, r := range wantRows {
			dates = append(dates, r[0])
		}
		if cats := rangeCells(t, path, got[0].Cats); !slices.Equal(cats, dates) {
			t.Errorf("dates: got %q, want %q", cats, dates)
		}
		// amount_mismatch, the first series: its counts, oldest first.
		var counts []string
		for _, r := range wantRows {
			counts = append(counts, r[2])
		}
		if vals := rangeCells(t, path, got[0].Values); !slices.Equal(vals, counts) {
			t.Errorf("amount_mismatch: got %q, want %q", vals, counts)
		}
	})
}

// TestWorkbookChartsWithoutHistory: no money at risk draws no money chart,
// and a trend that was not read, or found nothing, leaves the run's own
// day on the Trend sheet with a line saying why.
func TestWorkbookChartsWithoutHistory(t *testing.T) {
	for _, tt := range []struct {
		name  string
		trend []reconcile.TrendDay
		note  string
	}{
		{"not read", nil, "Only this run's business date: earlier dates were not read."},
		{"none found", []reconcile.TrendDay{}, "Only this run's business date: no earlier date of wechatpay has a successful run."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := testResult(t)
			res.Findings, res.Journals = nil, nil
			res.Counts = map[reconcile.Category]int{reconcile.Matched: 3}
			res.Run.FinishedAt = res.Run.StartedAt.Add(time.Minute)
			path := filepath.Join(t.TempDir(), "review.xlsx")
			if _, err := reports.WriteWorkbookWith(path, res, reports.WorkbookOptions{Trend: tt.trend}); err != nil {
				t.Fatal(err)
			}
			f, err := excelize.OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r := findRow(t, f, "Summary", 1, "Money at risk by category")
			if got := cellValue(t, f, "Summary", "A"+itoa(r+1), false); got != "No money at risk." {
				t.Errorf("money table: got %q, want No money at risk.", got)
			}
			if charts := sheetCharts(t, path, "Summary"); len(charts) != 0 {
				t.Errorf("got %d charts on Summary, want none", len(charts))
			}
			rows, err := f.GetRows("Trend")
			if err != nil {
				t.Fatal(err)
			}
			want := [][]string{
				{"Business Date", "matched", "amount_mismatch", "status_mismatch", "missing_local", "missing_channel",
					"duplicate_payment", "duplicate_refund", "over_refund", "suspected_duplicate_refund",
					"suspected_duplicate_payment", "order_mismatch", "refund_currency_mismatch", "chargeback", "dispute_mismatch", "refund_reversed", "fee_mismatch",
					"unrecognized", "pending", "duplicate_vanished"},
				{"2026-11-28", "3", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"},
				nil,
				{tt.note},
			}
			if len(rows) != len(want) {
				t.Fatalf("got rows %q, want %q", rows, want)
			}
			for i := range want {
				if !slices.Equal(rows[i], want[i]) {
					t.Errorf("row %d: got %q, want %q", i+1, rows[i], want[i])
				}
			}
			if charts := sheetCharts(t, path, "Trend"); len(charts) != 1 || len(charts[0].Line) != 1 {
				t.Errorf("got %+v, want the line chart", charts)
			}
		})
	}
}
