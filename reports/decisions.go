package reports

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
// decision (case-insensitive, surrounding spaces ignored), a bad version,
// a line with a decision but no Finding, or a finding decided twice (on
// one sheet or across them) is an error naming the file, the row and the
// column, and the sheet when it is not "Review".
//
// A decision is a plain value a person typed or picked from the dropdown:
// a string cell. A Decision cell with a formula (whatever it last
// computed, or nothing), a number, a TRUE/FALSE, an error value or a date
// is refused for its line, and so is a formula in any other column read
// back (Finding, Version, Reviewer, Note): its value is whatever a
// spreadsheet computed when it last saved the file. A Finding or a
// Decision is never written with a leading ', so one there is taken for
// the marker some programs store to keep a value text; a Reviewer or a
// Note is read as written ('t Hooft).
//
// A workbook past the limits of what the import reads (a file of 32 MiB,
// 256 MiB of XML in all and 128 MiB in one zip entry, as declared and as
// inflated, and 1,048,576 rows a Review sheet) is refused with one error
// that names the file and the limit and wraps ErrWorkbookTooLarge; no
// decision is read from it.
//
// Columns are found by their header, so a reviewer who moves or inserts a
// column does not break the read. Every bad line is reported, not only
// the first, so the workbook can be fixed in one pass; each is a
// *reconcile.ParseError.
func ReadDecisions(path string) ([]Decision, error) {
	w, file, err := openWorkbook(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	all, err := w.sheets()
	if err != nil {
		return nil, err
	}
	var sheets []workbookSheet
	for _, s := range all {
		if reviewSheetNumber(s.name) > 0 {
			sheets = append(sheets, s)
		}
	}
	// By number, not by tab: a person may drag the tabs about.
	slices.SortFunc(sheets, func(a, b workbookSheet) int { return reviewSheetNumber(a.name) - reviewSheetNumber(b.name) })
	if len(sheets) == 0 || sheets[0].name != SheetReview {
		return nil, &reconcile.ParseError{File: path, Err: fmt.Errorf("no %s sheet: not a review workbook of the job", SheetReview)}
	}
	r := &decisionReader{path: path, w: w, seen: map[string]place{}}
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
	w    *workbookReader
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
func (r *decisionReader) readSheet(sheet workbookSheet) error {
	var cols map[string]int // header name to column
	err := r.w.readRows(sheet, maxReviewRows, func(row int, cells []workbookCell) error {
		if cols != nil {
			r.readLine(sheet.name, row, cells, cols)
			return nil
		}
		cols = map[string]int{}
		for _, c := range cells {
			h := listValue(c.value)
			if _, dup := cols[h]; row != 1 || c.typ != cellText || dup {
				continue // the header is row 1, in text; the first of a name counts
			}
			cols[h] = c.col
		}
		for _, want := range []string{colFinding, colDecision, colVersion} {
			if _, ok := cols[want]; !ok {
				return r.parseError(sheet.name, 1, want, fmt.Errorf("no %s column in the %s sheet's header", want, sheet.name))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if cols == nil {
		return r.parseError(sheet.name, 1, colFinding, fmt.Errorf("the %s sheet has no header", sheet.name))
	}
	return nil
}

// readLine reads the decision of one line, if it has one.
func (r *decisionReader) readLine(sheet string, row int, cells []workbookCell, cols map[string]int) {
	cell := func(name string) workbookCell {
		if col, ok := cols[name]; ok {
			return cellAt(cells, col)
		}
		return workbookCell{}
	}
	// A Decision cell emptied by a person may keep an empty string.
	if c := cell(colDecision); c.typ == cellBlank || c.typ == cellText && strings.TrimSpace(c.value) == "" {
		return
	}
	ok := true
	bad := func(col string, format string, args ...any) {
		r.errs = append(r.errs, r.parseError(sheet, row, col, fmt.Errorf(format, args...)))
		ok = false
	}
	// value is the plain value of a column: text, or a number where
	// numbers is set. Anything else is a bad line, wanting want, and
	// plain is false.
	value := func(col string, numbers bool, want string) (v string, plain bool) {
		c := cell(col)
		switch {
		case c.typ != cellBlank && c.typ != cellText && (c.typ != cellNumber || !numbers):
			bad(col, "holds %s; want %s", c.holds(), want)
			return "", false
		case reconcile.TextFault(c.value) != "":
			// _x0000_ reads as a NUL, which the database refuses.
			bad(col, "%s", reconcile.TextFault(c.value))
			return "", false
		}
		return c.value, true
	}
	word, decided := value(colDecision, false, "approve, reject or investigate, typed or picked from the list")
	ref, found := value(colFinding, false, "the finding's reference as the job wrote it")
	version, versioned := value(colVersion, true, "the whole number the job wrote")
	reviewer, _ := value(colReviewer, true, "a name typed in")
	note, _ := value(colNote, true, "a note typed in")
	word = listValue(word)
	d := Decision{
		Sheet: sheet, Row: row, Ref: listValue(ref), Decision: strings.ToLower(word),
		Reviewer: strings.TrimSpace(reviewer), Note: strings.TrimSpace(note),
	}
	if _, known := reconcile.DecisionState(d.Decision); decided && !known {
		bad(colDecision, "unknown decision %s: want approve, reject or investigate", reconcile.Quote(word))
	}
	switch first, dup := r.seen[d.Ref]; {
	case !found:
		// refused above
	case d.Ref == "":
		bad(colFinding, "a decision but no finding")
	case dup:
		if first.sheet == sheet {
			bad(colFinding, "finding %s already decided on row %d", reconcile.Quote(d.Ref), first.row)
		} else {
			bad(colFinding, "finding %s already decided on row %d of sheet %s", reconcile.Quote(d.Ref), first.row, first.sheet)
		}
	default:
		r.seen[d.Ref] = place{sheet, row}
	}
	version = listValue(version)
	var err error
	if d.Version, err = strconv.Atoi(version); versioned && (err != nil || d.Version < 0) {
		bad(colVersion, "version %s: want the whole number the job wrote", reconcile.Quote(version))
	}
	if ok {
		r.out = append(r.out, d)
	}
}

// listValue is a value from the dropdown or written by the job (a
// decision, a finding's reference, a version, a header) as a person meant
// it: without surrounding spaces, and without a leading ', which none of
// them has: some programs store the one that marks a value as text.
func listValue(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "'")
	return strings.TrimSpace(s)
}
