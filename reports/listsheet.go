package reports

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"

	"reconcile"
)

// The list sheets (Review, Chargebacks, Pending, Auto-reversed) are tables of findings
// under a header row, one a line. The Review sheets hold review_max_lines
// lines (50,000 unless set, 1,048,575 at the most); Chargebacks, Pending
// and Auto-reversed hold every finding of theirs, bounded by the night's rows
// alone; a sheet holds 1,048,575. excelize lays these sheets out with
// their header alone (frozen pane, column widths, autofilter, dropdown,
// all sized for the lines to come), and their lines are written into the
// workbook as it is copied out of excelize's file (writeWithLines): one
// pass, with the cell rules of cells.go. What the copy relies on is the
// file format, not how excelize works inside: the sheets' parts as
// xl/workbook.xml and its relationships name them, and the end of each
// one's sheetData.
//
// excelize has no other way to write these lines that keeps the cells as
// they are. Its in-memory sheets hold some 4 KB a line and marshal every
// cell by reflection: 60,000 lines took 10.4 s and 1.32 GB of allocation,
// against 1.0 s and 19 MB here. Its StreamWriter (v2.11.1) writes a
// number that is not an integer only from a float64, with the fewest
// digits (99.80 reads back as 99.8), and escapes every string itself, so a
// control character, U+FFFE or U+FFFF reads back as U+FFFD: three of the
// workbook's tests fail under it. It also costs more. A 10M run has 2 GiB
// of RSS in all and reaches 1,964 to 2,010 MiB; its reports are made
// beside the commit, which takes 3.3 to 5 s. Both ways were run one after
// the other, six times each, each run a process of its own
// (BenchmarkListSheets; a 2-processor machine that other work kept at a
// load of 4 to 12, so wall times varied up to fourfold and CPU times are
// given):
//
//   - the 10M night of make bench (50,000 review lines in the workbook,
//     75,000 in the CSV, 15,000 reversed): here 0.51 to 0.80 s of CPU,
//     30 MiB allocated, RSS up 14 to 15 MiB; StreamWriter 1.12 to
//     1.55 s, 302 MiB, RSS up 85 to 103 MiB.
//   - every list sheet full, 1,048,575 lines each: here 13.9 to 26.0 s,
//     654 MiB, RSS up 13 to 19 MiB; StreamWriter 46.6 to 62.8 s,
//     9.1 GiB, RSS up 2.0 to 2.4 GiB, more than a whole run has. It
//     holds the whole file in memory while it writes it.

// listSheet is one list sheet: its columns and its lines.
type listSheet struct {
	name   string
	header []string
	widths []float64
	// found are the findings on it, indexes into the result's, in report
	// order; a sheet of payouts has cases instead.
	found []int
	fill  func(f reconcile.Finding, cells lineCells)
	cases []reconcile.PayoutCase
	// csv is the export of every review line, where a value cut to fit is
	// whole too; "" for the sheets it does not cover.
	csv      string
	dropdown bool // the Decision dropdown of a Review sheet
}

// lines is how many lines the sheet has.
func (ls *listSheet) lines() int { return len(ls.found) + len(ls.cases) }

// line fills cells with line i of the sheet, and returns the reference
// of its finding ("" for a payout's line): where a value cut to fit is
// whole.
func (ls *listSheet) line(res *reconcile.Result, i int, cells lineCells) string {
	if ls.cases != nil {
		payoutLine(ls.cases[i], cells)
		return ""
	}
	f := res.Findings[ls.found[i]]
	ls.fill(f, cells)
	return f.Ref
}

// listSheets are the list sheets of res: the first lay.inWorkbook review
// lines over the Review sheets, lay.sheetLines to a sheet, each a complete
// table of its own, so a person can filter and decide on any of them alone;
// then the pending findings and the reversed ones, every one of them, on
// as many sheets as they fill ("Pending 2", "Auto-reversed 2", …): a
// sheet holds no more lines than Excel opens.
func listSheets(res *reconcile.Result, lay reviewLayout, loc *time.Location) []listSheet {
	review := func(f reconcile.Finding, cells lineCells) { reviewLine(f, loc, cells) }
	var lists []listSheet
	for _, name := range lay.sheets {
		lists = append(lists, listSheet{name: name, header: reviewHeader, widths: reviewWidths,
			fill: review, csv: lay.csv, dropdown: true})
	}
	keys := make(map[string]string, len(res.Journals))
	for _, j := range res.Journals {
		keys[j.Row] = j.IdempotencyKey
	}
	pending := listSheet{name: SheetPending, header: pendingHeader, widths: pendingWidths,
		fill: func(f reconcile.Finding, cells lineCells) { pendingLine(f, loc, cells) }}
	auto := listSheet{name: SheetAutoReversed, header: autoHeader, widths: autoWidths,
		fill: func(f reconcile.Finding, cells lineCells) { autoLine(f, loc, keys[f.RowKey()], cells) }}
	chargebacks := listSheet{name: SheetChargebacks, header: chargebackHeader, widths: chargebackWidths,
		fill: func(f reconcile.Finding, cells lineCells) { chargebackLine(f, loc, cells) }}
	line := 0
	for i, f := range res.Findings {
		if f.NeedsReview() && line < lay.inWorkbook {
			s := &lists[line/lay.sheetLines]
			s.found = append(s.found, i)
			line++
		}
		if f.Category == reconcile.Pending {
			pending.found = append(pending.found, i)
		}
		if f.AutoReverse {
			auto.found = append(auto.found, i)
		}
		if f.Category == reconcile.Chargeback {
			chargebacks.found = append(chargebacks.found, i)
		}
	}
	if len(chargebacks.found) > 0 { // a channel without chargebacks is spared the sheet
		lists = append(lists, chargebacks.split(lay.sheetLines)...)
	}
	if res.Payouts != nil { // a statement's night: its payouts, every one
		payouts := listSheet{name: SheetPayouts, header: payoutHeader, widths: payoutWidths, cases: res.Payouts}
		return slices.Concat(lists, payouts.split(lay.sheetLines))
	}
	return slices.Concat(lists, pending.split(lay.sheetLines), auto.split(lay.sheetLines))
}

// split cuts s into sheets of at most lines lines each, the first under
// s's name, the others numbered from 2; one empty sheet for none.
func (s listSheet) split(lines int) []listSheet {
	var out []listSheet
	for i := 0; i == 0 || i*lines < s.lines(); i++ {
		part := s
		if i > 0 {
			part.name = s.name + " " + strconv.Itoa(i+1)
		}
		from, to := i*lines, min(s.lines(), (i+1)*lines)
		if s.cases != nil {
			part.cases = s.cases[from:to]
		} else {
			part.found = s.found[from:to]
		}
		out = append(out, part)
	}
	return out
}

// pendingLine fills cells with the line of a finding expected in the next
// day's file.
func pendingLine(f reconcile.Finding, loc *time.Location, cells lineCells) {
	clear(cells)
	cells.texts(1, f.Ref, f.OrderNo, f.RefundNo, f.LocalTxnID)
	if f.HasLocal {
		cells.money(5, f.LocalAmount, f.LocalCurrency)
	}
	cells.texts(6, findingCurrency(f), localTime(f.OccurredAt, loc), f.Hint)
}

// autoLine fills cells with the line of a finding the run reversed itself,
// with the key of its journal.
func autoLine(f reconcile.Finding, loc *time.Location, journalKey string, cells lineCells) {
	clear(cells)
	cells.texts(1, string(f.Category), f.OrderNo, f.RefundNo, f.ChannelTxnID, f.OriginalTxnID)
	if f.HasChannel {
		cells.money(6, f.ChannelAmount, f.Currency)
	}
	cells.texts(7, f.Currency, localTime(f.OccurredAt, loc), journalKey)
}

// chargebackLine fills cells with the line of a new chargeback: the
// dispute beside the order's refunds, one a line of the last cell.
func chargebackLine(f reconcile.Finding, loc *time.Location, cells lineCells) {
	clear(cells)
	d := f.DisputeFacts()
	cells.texts(1, f.Ref, f.OrderNo, d.Customer)
	cells.money(4, f.ChannelAmount, f.Currency)
	if f.FeeMilli%1000 == 0 {
		cells.money(5, f.FeeMilli/1000, f.Currency)
	} else {
		cells.text(5, reconcile.FormatFee(f.FeeMilli, f.Currency))
	}
	cells.texts(6, f.Currency, d.Reason, localTime(f.OccurredAt, loc), d.Status, d.ID, f.ChannelTxnID,
		strings.Join(f.Related, "\n"))
}

// payoutLine fills cells with the line of a payout a statement's night
// looked for: where it stands, and where its money came.
func payoutLine(c reconcile.PayoutCase, cells lineCells) {
	clear(cells)
	cells.texts(1, c.Channel, c.ID)
	cells.money(3, c.Amount, c.Currency)
	cells.texts(4, c.Currency, c.ExpectedOn.Format(time.DateOnly))
	if !c.ArrivedOn.IsZero() {
		cells.text(6, c.ArrivedOn.Format(time.DateOnly))
		cells.money(7, c.Arrived, c.Currency)
	}
	cells.texts(8, c.Status, c.Account, strings.Join(c.BankRefs, "\n"), c.Reference)
}

// layOut writes the header of a list sheet and sizes its pane, filter and
// dropdown for its lines. The styles its lines use are made now, while
// excelize still writes the styles: a money format per currency's digits,
// and the quote prefix when a text starts like a formula.
func (ls *listSheet) layOut(s *sheet, res *reconcile.Result) error {
	s.header(1, ls.header)
	lastRow := 1 + ls.lines()
	if ls.dropdown {
		if err := addDecisionDropdown(s, lastRow); err != nil {
			return err
		}
	}
	s.finish(len(ls.header), lastRow, ls.widths)
	cells := make(lineCells, len(ls.header))
	quote := false
	for i := range ls.lines() {
		ls.line(res, i, cells)
		for _, c := range cells {
			switch {
			case c.kind == kindMoney && s.err == nil:
				_, s.err = s.st.moneyStyle(c.currency)
			case c.kind == kindText && !quote:
				quote = startsLikeFormula(cellString(c.text, ""))
			}
		}
	}
	if quote && s.err == nil {
		_, s.err = s.st.quotePrefixed(0)
	}
	return s.err
}

// addDecisionDropdown adds the Decision dropdown over the data rows of a
// Review sheet, lastRow the last of them.
func addDecisionDropdown(s *sheet, lastRow int) error {
	// With no data rows the dropdown still covers the first, so the sheet
	// looks the same every night.
	last := max(lastRow, 2)
	decisionCol := s.colName(reviewColumn(colDecision))
	dv := excelize.NewDataValidation(true)
	dv.Sqref = fmt.Sprintf("%s2:%s%d", decisionCol, decisionCol, last)
	if err := dv.SetDropList(decisionWords()); err != nil {
		return err
	}
	dv.SetError(excelize.DataValidationErrorStyleStop, "Decision", "Choose approve, reject or investigate.")
	if s.err == nil {
		s.err = s.f.AddDataValidation(s.name, dv)
	}
	return s.err
}

// writeWithLines writes the workbook f to w with the lines of its list
// sheets put in. Every part but those sheets is copied as excelize
// compressed it; each list sheet gets its lines before the end of its
// sheetData, and the dimension that says how far its cells go.
func writeWithLines(w io.Writer, f *excelize.File, st *styles, res *reconcile.Result, lists []listSheet) error {
	var laidOut bytes.Buffer
	if _, err := f.WriteTo(&laidOut); err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(laidOut.Bytes()), int64(laidOut.Len()))
	if err != nil {
		return err
	}
	parts, err := sheetParts(zr)
	if err != nil {
		return err
	}
	byPart := make(map[string]*listSheet, len(lists))
	for i := range lists {
		part, ok := parts[lists[i].name]
		if !ok {
			return fmt.Errorf("sheet %q: not in the workbook", lists[i].name)
		}
		byPart[part] = &lists[i]
	}
	zw := zip.NewWriter(w)
	// The lines are most of the file: compressed fast, they cost a little
	// more size and much less time.
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	for _, zf := range zr.File {
		ls := byPart[zf.Name]
		if ls == nil {
			if err := zw.Copy(zf); err != nil {
				return err
			}
			continue
		}
		if err := writeSheetLines(zw, zf, newLineWriter(st, res, len(ls.header)), ls); err != nil {
			return fmt.Errorf("sheet %s: %w", ls.name, err)
		}
	}
	return zw.Close()
}

// sheetParts maps the workbook's sheet names to their parts in the file,
// as xl/workbook.xml and its relationships say.
func sheetParts(zr *zip.Reader) (map[string]string, error) {
	var book struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			ID   string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	var rels struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if err := readXMLPart(zr, "xl/workbook.xml", &book); err != nil {
		return nil, err
	}
	if err := readXMLPart(zr, "xl/_rels/workbook.xml.rels", &rels); err != nil {
		return nil, err
	}
	targets := make(map[string]string, len(rels.Rels))
	for _, r := range rels.Rels {
		if t, ok := strings.CutPrefix(r.Target, "/"); ok {
			targets[r.ID] = t
		} else {
			targets[r.ID] = path.Join("xl", r.Target)
		}
	}
	parts := make(map[string]string, len(book.Sheets))
	for _, s := range book.Sheets {
		if t, ok := targets[s.ID]; ok {
			parts[s.Name] = t
		}
	}
	return parts, nil
}

func readXMLPart(zr *zip.Reader, name string, v any) error {
	r, err := zr.Open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := xml.NewDecoder(r).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// writeSheetLines writes the part zf of a list sheet, laid out with its
// header alone, with its lines before the end of its sheetData.
func writeSheetLines(zw *zip.Writer, zf *zip.File, lw *lineWriter, ls *listSheet) error {
	r, err := zf.Open()
	if err != nil {
		return err
	}
	laidOut, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return err
	}
	end := bytes.Index(laidOut, []byte("</sheetData>"))
	if end < 0 {
		return fmt.Errorf("%s has no sheetData", zf.Name)
	}
	out, err := zw.CreateHeader(&zip.FileHeader{Name: zf.Name, Method: zip.Deflate, Modified: zf.Modified})
	if err != nil {
		return err
	}
	lw.w = bufio.NewWriterSize(out, 64<<10)
	head := laidOut[:end]
	if ls.lines() > 0 {
		head, err = withDimension(head, len(ls.header), 1+ls.lines())
		if err != nil {
			return fmt.Errorf("%s: %w", zf.Name, err)
		}
	}
	lw.w.Write(head)
	cells := make(lineCells, len(ls.header))
	for i := range ls.lines() {
		ref := ls.line(lw.res, i, cells)
		lw.line(i+2, cells, wholeValue(lw.res, ref, ls.csv))
	}
	lw.w.Write(laidOut[end:])
	if lw.err != nil {
		return lw.err
	}
	return lw.w.Flush()
}

// withDimension returns the start of a sheet's XML with its dimension (the
// range its cells cover, a hint to the reader) reaching row lastRow.
func withDimension(head []byte, cols, lastRow int) ([]byte, error) {
	const attr = `<dimension ref="`
	i := bytes.Index(head, []byte(attr))
	if i < 0 {
		return head, nil
	}
	i += len(attr)
	j := bytes.IndexByte(head[i:], '"')
	if j < 0 {
		return nil, fmt.Errorf("dimension without its end")
	}
	ref, err := excelize.CoordinatesToCellName(cols, lastRow)
	if err != nil {
		return nil, err
	}
	return bytes.Join([][]byte{head[:i], []byte("A1:" + ref), head[i+j:]}, nil), nil
}

// lineWriter writes the lines of a list sheet as worksheet XML, each cell
// as the sheet's cell methods (cells.go) write it: text as an inline
// string that is never a formula, with the quote prefix when it starts
// like one; money as its exact decimal in a number cell, in the number
// format of its currency.
type lineWriter struct {
	w       *bufio.Writer
	st      *styles
	res     *reconcile.Result
	cols    []string // column letters
	quote   string   // the style of text that starts like a formula
	row     []byte
	scratch []byte
	err     error
}

func newLineWriter(st *styles, res *reconcile.Result, cols int) *lineWriter {
	lw := &lineWriter{st: st, res: res}
	for col := 1; col <= cols; col++ {
		name, _ := excelize.ColumnNumberToName(col)
		lw.cols = append(lw.cols, name)
	}
	if q, ok := st.quote[0]; ok {
		lw.quote = strconv.Itoa(q)
	}
	return lw
}

func (lw *lineWriter) line(row int, cells lineCells, whole string) {
	w := lw.w
	lw.row = strconv.AppendInt(lw.row[:0], int64(row), 10)
	w.WriteString(`<row r="`)
	w.Write(lw.row)
	w.WriteString(`">`)
	for i, c := range cells {
		switch c.kind {
		case kindText:
			v := cellString(c.text, whole)
			lw.ref(i)
			if startsLikeFormula(v) {
				if lw.quote == "" && lw.err == nil {
					lw.err = errors.New("no quote-prefix style")
				}
				w.WriteString(` s="`)
				w.WriteString(lw.quote)
				w.WriteByte('"')
			}
			w.WriteString(` t="inlineStr"><is><t`)
			if first, last := v[0], v[len(v)-1]; isXMLSpace(first) || isXMLSpace(last) {
				w.WriteString(` xml:space="preserve"`)
			}
			w.WriteByte('>')
			lw.scratch = append(lw.scratch[:0], v...)
			if err := xml.EscapeText(w, lw.scratch); err != nil && lw.err == nil {
				lw.err = err
			}
			w.WriteString(`</t></is></c>`)
		case kindMoney:
			id, ok := lw.st.money[digits(c.currency)]
			if !ok && lw.err == nil {
				lw.err = fmt.Errorf("no money style for %s", c.currency)
			}
			lw.ref(i)
			w.WriteString(` s="`)
			w.WriteString(strconv.Itoa(id))
			w.WriteString(`"><v>`)
			w.WriteString(reconcile.FormatAmount(c.minor, c.currency))
			w.WriteString(`</v></c>`)
		case kindInt:
			lw.ref(i)
			w.WriteString(`><v>`)
			w.WriteString(strconv.Itoa(c.n))
			w.WriteString(`</v></c>`)
		}
	}
	w.WriteString(`</row>`)
}

// ref starts the cell of column i (from 0) on the line being written.
func (lw *lineWriter) ref(i int) {
	lw.w.WriteString(`<c r="`)
	lw.w.WriteString(lw.cols[i])
	lw.w.Write(lw.row)
	lw.w.WriteByte('"')
}

// isXMLSpace is a character at an end of a text that a reader trims unless
// the text says to keep it.
func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
