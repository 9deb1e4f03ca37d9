package reports

import (
	"fmt"
	"strings"

	"github.com/xuri/excelize/v2"

	"reconcile"
)

// How the workbook's cells are written: styles, number formats, column
// widths and the typed values of a cell, for the sheets (workbook.go,
// charts.go) to lay out. The rules for the text in a cell are in
// celltext.go, which the workbook reader shares.

// styles are the cell styles of the workbook, made once per file.
type styles struct {
	f      *excelize.File
	header int
	bold   int
	money  map[int]int  // by currency digits
	quote  map[int]int  // a style to its copy with the quote prefix
	quoted map[int]bool // the copies
}

func newStyles(f *excelize.File) (*styles, error) {
	st := &styles{f: f, money: map[int]int{}, quote: map[int]int{}, quoted: map[int]bool{}}
	var err error
	st.header, err = f.NewStyle(&excelize.Style{
		Font:   &excelize.Font{Bold: true},
		Fill:   excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"D9D9D9"}},
		Border: []excelize.Border{{Type: "bottom", Color: "808080", Style: 1}},
	})
	if err != nil {
		return nil, err
	}
	st.bold, err = f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// moneyStyle is the number format of a currency: as many decimals as it
// has minor-unit digits (JPY none, KWD three).
func (st *styles) moneyStyle(currency string) (int, error) {
	d := digits(currency)
	if id, ok := st.money[d]; ok {
		return id, nil
	}
	format := moneyFormat(currency)
	id, err := st.f.NewStyle(&excelize.Style{CustomNumFmt: &format})
	if err != nil {
		return 0, err
	}
	st.money[d] = id
	return id, nil
}

// quotePrefixed returns style id with the quote prefix (quotePrefix on its
// xf in styles.xml): the cell shows its text as it is, and a person who
// edits it in a spreadsheet edits text, not a formula. excelize's Style has
// no such field, and NewStyle returns the first existing xf that looks the
// same whatever its quote prefix, so the prefix is set on a copy of the xf
// made here, never on one that other cells share. That NewStyle compares
// without the prefix does no harm: a copy comes after the xf it copies,
// which NewStyle finds first.
func (st *styles) quotePrefixed(id int) (int, error) {
	if st.quoted[id] {
		return id, nil
	}
	if q, ok := st.quote[id]; ok {
		return q, nil
	}
	xfs := st.f.Styles.CellXfs
	if xfs == nil || id < 0 || id >= len(xfs.Xf) {
		return 0, fmt.Errorf("quote prefix on style %d: no such cell format", id)
	}
	xf := xfs.Xf[id]
	xf.QuotePrefix = new(true)
	xfs.Xf = append(xfs.Xf, xf)
	xfs.Count = len(xfs.Xf)
	q := len(xfs.Xf) - 1
	st.quote[id], st.quoted[q] = q, true
	return q, nil
}

// moneyFormat is the number format of a currency's amounts: as many
// decimals as it has minor-unit digits.
func moneyFormat(currency string) string {
	format := "#,##0"
	if d := digits(currency); d > 0 {
		format += "." + strings.Repeat("0", d)
	}
	return format
}

// sheet writes cells of one worksheet and keeps the first error, so the
// layout code reads as a layout.
type sheet struct {
	f    *excelize.File
	name string
	st   *styles
	err  error
	// whole says where the values of the line being written can be read
	// whole, for the note of a cell cut to fit; the writer of a line sets
	// it, "" when there is no such place.
	whole string
}

func (s *sheet) cell(col, row int) string {
	name, err := excelize.CoordinatesToCellName(col, row)
	if err != nil && s.err == nil {
		s.err = err
	}
	return name
}

// text writes a string cell. Every text of the workbook goes through
// here, so every sheet keeps the same rules (cellString): the value is
// stored as it is, with its bidi controls shown, and cut with a note when
// it is more than a cell holds. A string cell is never a formula, whatever
// the value looks like; one that starts like a formula also gets the quote
// prefix, so it stays text when a person edits it.
func (s *sheet) text(col, row int, v string) {
	if s.err != nil || v == "" {
		return
	}
	c := s.cell(col, row)
	if s.err != nil {
		return
	}
	v = cellString(v, s.whole)
	store := s.f.SetCellStr
	if strings.Contains(v, "_x") {
		// excelize's table of shared strings finds a value again by its
		// text but files it under its own escaping of the text, so two
		// values that differ in their escapes can come back as one
		// ("_x005F_x0041_" as "_x0041_"). A value that holds an escape
		// goes inline instead, a cell of its own: SetCellDefault writes
		// text with a "_" in it as an inline string, as it is.
		store = s.f.SetCellDefault
	}
	if s.err = store(s.name, c, v); startsLikeFormula(v) {
		s.quote(c)
	}
}

// quote gives cell c the quote prefix, on the style it has.
func (s *sheet) quote(c string) {
	if s.err != nil {
		return
	}
	id, err := s.f.GetCellStyle(s.name, c)
	if err == nil {
		id, err = s.st.quotePrefixed(id)
	}
	if err == nil {
		err = s.f.SetCellStyle(s.name, c, c, id)
	}
	s.err = err
}

func (s *sheet) int(col, row int, n int) {
	if s.err != nil {
		return
	}
	c := s.cell(col, row)
	if s.err == nil {
		s.err = s.f.SetCellInt(s.name, c, int64(n))
	}
}

// money writes minor units as a number in major units. SetCellDefault
// stores the decimal text as it is in a numeric cell, so the amount never
// passes through a float64 on its way into the file.
func (s *sheet) money(col, row int, minor int64, currency string) {
	if s.err != nil {
		return
	}
	c := s.cell(col, row)
	if s.err != nil {
		return
	}
	if s.err = s.f.SetCellDefault(s.name, c, reconcile.FormatAmount(minor, currency)); s.err != nil {
		return
	}
	var id int
	if id, s.err = s.st.moneyStyle(currency); s.err != nil {
		return
	}
	s.err = s.f.SetCellStyle(s.name, c, c, id)
}

// style sets the style of a range of cells; a cell that text gave the
// quote prefix keeps it.
func (s *sheet) style(col1, row1, col2, row2, id int) {
	for row := row1; row <= row2; row++ {
		for col := col1; col <= col2; col++ {
			c := s.cell(col, row)
			if s.err != nil {
				return
			}
			cur, err := s.f.GetCellStyle(s.name, c)
			if err == nil {
				err = s.f.SetCellStyle(s.name, c, c, id)
			}
			if s.err = err; s.st.quoted[cur] {
				s.quote(c)
			}
		}
	}
}

// header writes the header of a table on row, from the first column on.
func (s *sheet) header(row int, names []string) {
	for i, h := range names {
		s.text(i+1, row, h)
	}
	s.style(1, row, len(names), row, s.st.header)
}

func (s *sheet) colName(col int) string {
	name, err := excelize.ColumnNumberToName(col)
	if err != nil && s.err == nil {
		s.err = err
	}
	return name
}

func (s *sheet) widths(ws []float64) {
	for i, w := range ws {
		col := s.colName(i + 1)
		if s.err != nil {
			return
		}
		s.err = s.f.SetColWidth(s.name, col, col, w)
	}
}

// finish freezes the header row, puts an autofilter over the table and
// sets the column widths of a list sheet.
func (s *sheet) finish(cols, lastRow int, widths []float64) {
	if s.err != nil {
		return
	}
	s.err = s.f.SetPanes(s.name, &excelize.Panes{
		Freeze:      true,
		YSplit:      1,
		TopLeftCell: "A2",
		ActivePane:  "bottomLeft",
		Selection:   []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}},
	})
	if s.err != nil {
		return
	}
	ref := s.cell(1, 1) + ":" + s.cell(cols, max(lastRow, 2))
	if s.err == nil {
		s.err = s.f.AutoFilter(s.name, ref, nil)
	}
	s.widths(widths)
}

// ref is an absolute reference to a range of the sheet, for a chart: the
// chart draws what those cells hold.
func (s *sheet) ref(col1, row1, col2, row2 int) string {
	from, err := excelize.CoordinatesToCellName(col1, row1, true)
	if err != nil && s.err == nil {
		s.err = err
	}
	to, err := excelize.CoordinatesToCellName(col2, row2, true)
	if err != nil && s.err == nil {
		s.err = err
	}
	name := s.name
	if strings.ContainsFunc(name, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_')
	}) {
		name = "'" + strings.ReplaceAll(name, "'", "''") + "'"
	}
	if from == to {
		return name + "!" + from
	}
	return name + "!" + from + ":" + to
}

// chart anchors a chart's top left corner at a cell.
func (s *sheet) chart(col, row int, c *excelize.Chart) {
	if s.err != nil {
		return
	}
	cell := s.cell(col, row)
	if s.err == nil {
		s.err = s.f.AddChart(s.name, cell, c)
	}
}

// cellKind is how a review line's cell is written: a workbook needs to
// know a number from text, a CSV file only how to spell it.
type cellKind int

const (
	kindBlank cellKind = iota
	kindText
	kindMoney
	kindInt
)

// lineCell is one cell of a line of a list sheet or of the CSV export.
type lineCell struct {
	kind     cellKind
	text     string
	minor    int64
	currency string
	n        int
}

// lineCells are the cells of one line, filled by column from 1; a text
// left empty is a blank cell.
type lineCells []lineCell

func (c lineCells) text(col int, v string) {
	if v != "" {
		c[col-1] = lineCell{kind: kindText, text: v}
	}
}

// texts sets the cells from col on, one value a column.
func (c lineCells) texts(col int, vs ...string) {
	for i, v := range vs {
		c.text(col+i, v)
	}
}

func (c lineCells) money(col int, minor int64, currency string) {
	c[col-1] = lineCell{kind: kindMoney, minor: minor, currency: currency}
}

func (c lineCells) int(col int, n int) {
	c[col-1] = lineCell{kind: kindInt, n: n}
}
