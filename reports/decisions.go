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
	Row      int    // 1-based row in the Review sheet
	Ref      string // the Finding column
	Version  int
	Decision string // "approve", "reject" or "investigate"
	Reviewer string // empty when the line does not say
	Note     string
}

// ReadDecisions reads the Review sheet of a workbook the job wrote: every
// line whose Decision is filled in. A workbook without the job's Review
// sheet or Finding/Decision/Version columns, an unknown decision
// (case-insensitive, surrounding spaces ignored; the ' text prefix is not
// part of a value), a bad version or a line with a decision but no Finding
// is an error naming the file, the row and the column.
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
	if idx, err := f.GetSheetIndex(SheetReview); err != nil || idx < 0 {
		return nil, &reconcile.ParseError{File: path, Err: fmt.Errorf("no %s sheet: not a review workbook of the job", SheetReview)}
	}
	rows, err := f.Rows(SheetReview)
	if err != nil {
		return nil, fmt.Errorf("read decisions %s: %w", path, err)
	}
	defer rows.Close()

	var (
		cols  map[string]int // header name to 0-based index
		out   []Decision
		errs  []error
		seen  = map[string]int{} // Ref to the row that decided it
		rowNo = 0
	)
	bad := func(row int, col string, format string, args ...any) {
		errs = append(errs, &reconcile.ParseError{File: path, Line: row, Column: col, Err: fmt.Errorf(format, args...)})
	}
	for rows.Next() {
		rowNo++
		// Raw values: a Version cell someone formatted as 0.00 or as a
		// date still reads as the number it holds.
		cells, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return nil, &reconcile.ParseError{File: path, Line: rowNo, Err: err}
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
					return nil, &reconcile.ParseError{File: path, Line: 1, Column: want,
						Err: fmt.Errorf("no %s column in the %s sheet's header", want, SheetReview)}
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
		d := Decision{Row: rowNo, Ref: get(colFinding), Reviewer: get(colReviewer), Note: get(colNote)}
		ok := true
		d.Decision = strings.ToLower(word)
		if !slices.Contains(decisions, d.Decision) {
			bad(rowNo, colDecision, "unknown decision %q: want approve, reject or investigate", word)
			ok = false
		}
		if d.Ref == "" {
			bad(rowNo, colFinding, "a decision but no finding")
			ok = false
		} else if first, dup := seen[d.Ref]; dup {
			bad(rowNo, colFinding, "finding %q already decided on row %d", d.Ref, first)
			ok = false
		} else {
			seen[d.Ref] = rowNo
		}
		v := get(colVersion)
		if d.Version, err = strconv.Atoi(v); err != nil || d.Version < 0 {
			bad(rowNo, colVersion, "version %q: want the whole number the job wrote", v)
			ok = false
		}
		if ok {
			out = append(out, d)
		}
	}
	if err := rows.Error(); err != nil {
		return nil, fmt.Errorf("read decisions %s: %w", path, err)
	}
	if cols == nil {
		return nil, &reconcile.ParseError{File: path, Line: 1, Column: colFinding,
			Err: fmt.Errorf("the %s sheet has no header", SheetReview)}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// cellValue is a cell as a person meant it: without surrounding spaces and
// without the ' that keeps a value text (the job writes one before
// anything that looks like a formula).
func cellValue(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "'")
	return strings.TrimSpace(s)
}
