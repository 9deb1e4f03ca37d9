package reports

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"reconcile"
)

// Decision is one line of a Review sheet with a decision written on it.
type Decision struct {
	Sheet    string // the Review sheet: "Review", "Review 2", …
	Row      int    // 1-based row in that sheet
	Ref      string // the Finding column
	Version  int
	Decision string // "approve", "reject" or "investigate"
	Reviewer string // empty when the line does not say
	Note     string
}

// ReadDecisions reads the Review sheets of a workbook the job wrote
// ("Review", then "Review 2", "Review 3", … in that order): every line
// whose Decision is filled in. A workbook without the job's Review sheet,
// a Review sheet without Finding/Decision/Version columns, an unknown
// decision (case-insensitive, surrounding spaces ignored; the ' text
// prefix is not part of a value), a bad version, a line with a decision
// but no Finding, or a finding decided twice (on one sheet or across
// them) is an error naming the file, the row and the column, and the
// sheet when it is not "Review".
//
// Columns are found by their header, so a reviewer who moves or inserts a
// column does not break the read. Every bad line is reported, not only
// the first, so the workbook can be fixed in one pass; each is a
// *reconcile.ParseError.
func ReadDecisions(path string) ([]Decision, error) {
	f, err := excelize.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("read decisions %s: %w", path, err)
	}
	defer f.Close()
	var sheets []string
	for _, name := range f.GetSheetList() {
		if reviewSheetNumber(name) > 0 {
			sheets = append(sheets, name)
		}
	}
	// By number, not by tab: a person may drag the tabs about.
	slices.SortFunc(sheets, func(a, b string) int { return reviewSheetNumber(a) - reviewSheetNumber(b) })
	if len(sheets) == 0 || sheets[0] != SheetReview {
		return nil, &reconcile.ParseError{File: path, Err: fmt.Errorf("no %s sheet: not a review workbook of the job", SheetReview)}
	}
	r := &decisionReader{path: path, f: f, seen: map[string]place{}}
	for _, sheet := range sheets {
		if err := r.readSheet(sheet); err != nil {
			return nil, err
		}
	}
	if len(r.errs) > 0 {
		return nil, errors.Join(r.errs...)
	}
	return r.out, nil
}

// place is a line of a Review sheet.
type place struct {
	sheet string
	row   int
}

// decisionReader collects the decisions and the bad lines of all Review
// sheets, so a finding decided on two sheets is caught like one decided
// twice on the same sheet.
type decisionReader struct {
	path string
	f    *excelize.File
	out  []Decision
	errs []error
	seen map[string]place // Ref to the line that decided it
}

// parseError names the file, the line and the column; a line of a sheet
// other than the first says which sheet, as a row number alone would
// point at the wrong one.
func (r *decisionReader) parseError(sheet string, row int, col string, err error) *reconcile.ParseError {
	if sheet != SheetReview {
		err = fmt.Errorf("sheet %s: %w", sheet, err)
	}
	return &reconcile.ParseError{File: r.path, Line: row, Column: col, Err: err}
}

// readSheet reads one Review sheet. A sheet it cannot read at all is the
// error it returns; bad lines are collected in r.errs.
func (r *decisionReader) readSheet(sheet string) error {
	rows, err := r.f.Rows(sheet)
	if err != nil {
		return fmt.Errorf("read decisions %s: %w", r.path, err)
	}
	defer rows.Close()

	var (
		cols  map[string]int // header name to 0-based index
		rowNo = 0
	)
	bad := func(row int, col string, format string, args ...any) {
		r.errs = append(r.errs, r.parseError(sheet, row, col, fmt.Errorf(format, args...)))
	}
	for rows.Next() {
		rowNo++
		// Raw values: a Version cell someone formatted as 0.00 or as a
		// date still reads as the number it holds.
		cells, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return r.parseError(sheet, rowNo, "", err)
		}
		if cols == nil {
			cols = map[string]int{}
			for i, h := range cells {
				h = cellValue(h)
				if _, dup := cols[h]; !dup {
					cols[h] = i
				}
			}
			for _, want := range []string{colFinding, colDecision, colVersion} {
				if _, ok := cols[want]; !ok {
					return r.parseError(sheet, 1, want, fmt.Errorf("no %s column in the %s sheet's header", want, sheet))
				}
			}
			continue
		}
		get := func(name string) string {
			i, ok := cols[name]
			if !ok || i >= len(cells) {
				return ""
			}
			return cellValue(cells[i])
		}
		word := get(colDecision)
		if word == "" {
			continue
		}
		d := Decision{Sheet: sheet, Row: rowNo, Ref: get(colFinding), Reviewer: get(colReviewer), Note: get(colNote)}
		ok := true
		d.Decision = strings.ToLower(word)
		if !slices.Contains(decisions, d.Decision) {
			bad(rowNo, colDecision, "unknown decision %q: want approve, reject or investigate", word)
			ok = false
		}
		if d.Ref == "" {
			bad(rowNo, colFinding, "a decision but no finding")
			ok = false
		} else if first, dup := r.seen[d.Ref]; dup {
			if first.sheet == sheet {
				bad(rowNo, colFinding, "finding %q already decided on row %d", d.Ref, first.row)
			} else {
				bad(rowNo, colFinding, "finding %q already decided on row %d of sheet %s", d.Ref, first.row, first.sheet)
			}
			ok = false
		} else {
			r.seen[d.Ref] = place{sheet, rowNo}
		}
		v := get(colVersion)
		if d.Version, err = strconv.Atoi(v); err != nil || d.Version < 0 {
			bad(rowNo, colVersion, "version %q: want the whole number the job wrote", v)
			ok = false
		}
		if ok {
			r.out = append(r.out, d)
		}
	}
	if err := rows.Error(); err != nil {
		return fmt.Errorf("read decisions %s: %w", r.path, err)
	}
	if cols == nil {
		return r.parseError(sheet, 1, colFinding, fmt.Errorf("the %s sheet has no header", sheet))
	}
	return nil
}

// cellValue is a cell as a person meant it: without surrounding spaces and
// without the ' that keeps a value text (the job writes one before
// anything that looks like a formula).
func cellValue(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "'")
	return strings.TrimSpace(s)
}
