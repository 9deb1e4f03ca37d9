package reports

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/inputfile"
)

// The limits of a workbook that review import reads. An xlsx file is a zip
// of XML: 830 KB can hold 800 MB, which took excelize 20 s and 2.1 GB to
// read. The figures are from what the job writes, measured with every value
// of every line distinct (the worst case for compression): a review line is
// about 1.1 KB of XML (510 bytes in its sheet, 500 in the shared strings)
// and 125 bytes of zipped file, so a workbook of review_max_lines' default
// 50,000 lines is a 6.3 MB file of 57 MB of XML. The limits leave room for
// about 4 to 5 times that, some 230,000 lines, whoever saved the file last.
// Such a workbook of 50,000 lines reads in about 1.2 s, the heap rising
// some 30 MiB; the densest XML a crafted file can hold within the limits takes
// some 10 to 20 s, the heap rising at most about 450 MiB.
const (
	// maxWorkbookFile is the most bytes the file may have: 5 times the
	// 6.3 MB of a full workbook of 50,000 lines.
	maxWorkbookFile = 32 << 20
	// maxWorkbookXML is the most its zip entries may hold uncompressed,
	// together: 4.5 times the 57 MB of a full workbook of 50,000 lines.
	maxWorkbookXML = 256 << 20
	// maxWorkbookPart is the most one zip entry may hold uncompressed: a
	// line's XML is split about evenly between its sheet and the shared
	// strings, so no part of a workbook within maxWorkbookXML needs more
	// than half of it.
	maxWorkbookPart = maxWorkbookXML / 2
	// maxWorkbookIndex is the most xl/workbook.xml and its relationships
	// may hold each: the job writes 1.4 KB, Excel a few KB more with its
	// defined names; a crafted one of millions of <sheet/> would take 4
	// times its size to hold.
	maxWorkbookIndex = 1 << 20
	// maxReviewRows is the most rows a Review sheet may have: its header
	// and maxSheetLines lines, all that an Excel sheet holds.
	maxReviewRows = maxSheetLines + 1
)

// ErrWorkbookTooLarge is wrapped by the error of a workbook past the limits
// above; no decision is read from it.
var ErrWorkbookTooLarge = errors.New("past the limits of a review workbook")

// workbookReader reads the cells of a workbook's sheets straight from its
// XML, as the file holds them: a cell's type (a formula above all) is what
// tells a value a person typed from one a spreadsheet computed, and
// excelize's row reader hides it, while its sheet reader holds the whole
// sheet (some 5 KB a line). Every part is read as a stream, counted
// against the limits as it is inflated.
type workbookReader struct {
	path    string
	parts   map[string]*zip.File // by lower-case name: part names ignore case
	left    int64                // uncompressed bytes that may still be read
	sstPart string               // the shared strings' part, read before the first sheet
	sst     *sharedStrings
}

// workbookSheet is a worksheet of the workbook, in tab order.
type workbookSheet struct {
	name string
	part string // its part in the zip: xl/worksheets/sheet2.xml
}

// openWorkbook opens the workbook at path. The file, and its zip entries
// as its directory declares them, are checked against the limits before
// any part is read; the parts read are then counted as they are inflated,
// so an entry that holds more than it declares is refused too.
func openWorkbook(path string) (*workbookReader, io.Closer, error) {
	f, err := inputfile.Open(path, "workbook")
	if err != nil {
		return nil, nil, err
	}
	w, err := newWorkbookReader(path, f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return w, f, nil
}

func newWorkbookReader(path string, f *os.File) (*workbookReader, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read workbook %s: %w", path, err)
	}
	w := &workbookReader{path: path, left: maxWorkbookXML}
	// f is a regular file: inputfile.Open saw to that.
	if st.Size() > maxWorkbookFile {
		return nil, w.tooLarge("the file has %d bytes; a review workbook may have %s", st.Size(), mib(maxWorkbookFile))
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("read workbook %s: %w", path, err)
	}
	w.parts = make(map[string]*zip.File, len(zr.File))
	var total uint64
	for _, zf := range zr.File {
		if zf.UncompressedSize64 > maxWorkbookPart {
			return nil, w.tooLarge("zip entry %s holds %d bytes; one entry may hold %s",
				reconcile.Quote(zf.Name), zf.UncompressedSize64, mib(maxWorkbookPart))
		}
		total += zf.UncompressedSize64
		name := strings.ToLower(zf.Name)
		if _, dup := w.parts[name]; dup {
			return nil, &reconcile.ParseError{File: path, Err: fmt.Errorf("zip entry %s is there twice", reconcile.Quote(zf.Name))}
		}
		w.parts[name] = zf
	}
	if total > maxWorkbookXML {
		return nil, w.tooLarge("its zip entries hold %d bytes together; they may hold %s", total, mib(maxWorkbookXML))
	}
	return w, nil
}

func (w *workbookReader) tooLarge(format string, args ...any) error {
	return &reconcile.ParseError{File: w.path, Err: fmt.Errorf("%w: %s; refused, no decision read", ErrWorkbookTooLarge, fmt.Sprintf(format, args...))}
}

func mib(n int) string { return strconv.Itoa(n>>20) + " MiB" }

// part opens a part of the workbook for reading, to hold at most limit
// bytes; nil when there is none.
func (w *workbookReader) part(name string, limit int64) (io.ReadCloser, error) {
	zf := w.parts[strings.ToLower(name)]
	if zf == nil {
		return nil, nil
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, fmt.Errorf("read workbook %s: zip entry %s: %w", w.path, reconcile.Quote(zf.Name), err)
	}
	return &partReader{w: w, zf: zf, rc: rc, limit: limit}, nil
}

// partReader counts what a part inflates against the limits.
type partReader struct {
	w     *workbookReader
	zf    *zip.File
	rc    io.ReadCloser
	n     int64
	limit int64
}

func (p *partReader) Read(b []byte) (int, error) {
	n, err := p.rc.Read(b)
	p.n += int64(n)
	p.w.left -= int64(n)
	name := reconcile.Quote(p.zf.Name)
	switch {
	case errors.Is(err, zip.ErrFormat):
		// archive/zip stops reading an entry at the size its directory
		// declares, with this error.
		return n, p.w.tooLarge("zip entry %s holds more than the %d bytes it declares", name, p.zf.UncompressedSize64)
	case p.n > p.limit:
		return n, p.w.tooLarge("zip entry %s holds more than %s, all it may hold", name, mib(int(p.limit)))
	case p.w.left < 0:
		return n, p.w.tooLarge("its zip entries hold more than %s together, all they may hold", mib(maxWorkbookXML))
	}
	return n, err
}

func (p *partReader) Close() error { return p.rc.Close() }

// decode reads a small part whole into v; found is false when there is
// no such part.
func (w *workbookReader) decode(name string, v any) (found bool, err error) {
	r, err := w.part(name, maxWorkbookIndex)
	if err != nil || r == nil {
		return false, err
	}
	defer r.Close()
	if err := xml.NewDecoder(r).Decode(v); err != nil {
		return true, w.malformed(name, err)
	}
	return true, nil
}

// malformed is the error of a part that cannot be read as XML, or the
// limits' error that stopped reading it.
func (w *workbookReader) malformed(part string, err error) error {
	var pe *reconcile.ParseError
	if errors.As(err, &pe) {
		return err // the limits, already said
	}
	return &reconcile.ParseError{File: w.path, Err: fmt.Errorf("%s: %w", part, err)}
}

// The parts every xlsx file has where Excel, LibreOffice and excelize put
// them.
const (
	workbookPart     = "xl/workbook.xml"
	workbookRelsPart = "xl/_rels/workbook.xml.rels"
	defaultSSTPart   = "xl/sharedStrings.xml"
)

// sheets returns the worksheets of the workbook in tab order.
func (w *workbookReader) sheets() ([]workbookSheet, error) {
	var book struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			ID   string `xml:"id,attr"` // r:id
		} `xml:"sheets>sheet"`
	}
	var rels struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	found, err := w.decode(workbookPart, &book)
	if err == nil && !found {
		err = &reconcile.ParseError{File: w.path, Err: fmt.Errorf("no %s: not an xlsx workbook", workbookPart)}
	}
	if err != nil {
		return nil, err
	}
	if _, err := w.decode(workbookRelsPart, &rels); err != nil {
		return nil, err
	}
	target := func(t string) string {
		if strings.HasPrefix(t, "/") {
			return path.Clean(t[1:])
		}
		return path.Join(path.Dir(workbookPart), t)
	}
	w.sstPart = defaultSSTPart
	parts := map[string]string{}
	for _, r := range rels.Rels {
		parts[r.ID] = target(r.Target)
		if strings.HasSuffix(r.Type, "/sharedStrings") {
			w.sstPart = target(r.Target)
		}
	}
	var out []workbookSheet
	names := map[string]bool{}
	for _, s := range book.Sheets {
		// Sheet names ignore case; two of one name would leave open which
		// a spreadsheet shows.
		if names[strings.ToLower(s.Name)] {
			return nil, &reconcile.ParseError{File: w.path, Err: fmt.Errorf("two sheets are named %s", reconcile.Quote(s.Name))}
		}
		names[strings.ToLower(s.Name)] = true
		if p, ok := parts[s.ID]; ok {
			out = append(out, workbookSheet{name: s.Name, part: p})
		}
	}
	return out, nil
}

// sharedStrings is a workbook's table of shared strings, in one string:
// the i-th ends at ends[i]. A []string would take 16 bytes for each, and
// the table of a crafted file can be millions of <si/>.
type sharedStrings struct {
	text string
	ends []uint32
}

func (t *sharedStrings) at(i int) (string, bool) {
	if i < 0 || i >= len(t.ends) {
		return "", false
	}
	start := uint32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.text[start:t.ends[i]], true
}

// richText reads the rest of an element just begun, a shared string's
// <si> or a cell's <is>, and returns its text: its own <t>, or those of its
// runs of formatted text (<r><t>). The <t> of a phonetic guide (<rPh>) is
// shown above the text, not part of it, and left out as Excel and excelize
// leave it out.
func richText(d *xml.Decoder) (string, error) {
	var b strings.Builder
	var in []string // the elements open inside the one begun
	for {
		tok, err := d.Token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			in = append(in, t.Name.Local)
		case xml.EndElement:
			if len(in) == 0 {
				return unxstring(b.String()), nil
			}
			in = in[:len(in)-1]
		case xml.CharData:
			if slices.Equal(in, []string{"t"}) || slices.Equal(in, []string{"r", "t"}) {
				b.Write(t)
			}
		}
	}
}

// readSharedStrings reads the table of shared strings, once.
func (w *workbookReader) readSharedStrings() error {
	if w.sst != nil {
		return nil
	}
	w.sst = &sharedStrings{}
	name := w.sstPart
	r, err := w.part(name, maxWorkbookPart)
	if err != nil || r == nil {
		return err
	}
	defer r.Close()
	var b strings.Builder
	d := xml.NewDecoder(r)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return w.malformed(name, err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "si" {
			si, err := richText(d)
			if err != nil {
				return w.malformed(name, err)
			}
			b.WriteString(si)
			w.sst.ends = append(w.sst.ends, uint32(b.Len()))
		}
	}
	w.sst.text = b.String()
	return nil
}

// cellType is what a cell holds, as its XML says.
type cellType int

const (
	cellBlank   cellType = iota
	cellText             // a shared or inline string
	cellNumber           // a number, as written: "2", "0.5"
	cellBool             // TRUE or FALSE, written 1 or 0
	cellError            // an error value: #N/A, #REF!, …
	cellDate             // an ISO 8601 date
	cellFormula          // a formula, whatever its last result
	cellUnknown          // a type xlsx does not define
)

// workbookCell is a cell as the file holds it.
type workbookCell struct {
	col   int // 1-based
	typ   cellType
	value string // its text or value as written; a formula's last result
}

// holds says in words what a cell that is not a plain value holds.
func (c workbookCell) holds() string {
	switch c.typ {
	case cellFormula:
		return "a formula"
	case cellNumber:
		return "the number " + reconcile.Quote(c.value)
	case cellBool:
		return "a TRUE/FALSE value"
	case cellError:
		return "the error value " + reconcile.Quote(c.value)
	case cellDate:
		return "the date " + reconcile.Quote(c.value)
	case cellText:
		return "text"
	}
	return "a cell of an unknown type"
}

// cellAt is the cell of cells in column col; blank when there is none.
func cellAt(cells []workbookCell, col int) workbookCell {
	i, ok := slices.BinarySearchFunc(cells, col, func(c workbookCell, col int) int { return c.col - col })
	if !ok {
		return workbookCell{col: col}
	}
	return cells[i]
}

// readRows reads the rows of a worksheet, in order, calling fn with each
// row's number and its cells that are not blank, in column order. Rows and
// cells must come in order, as every spreadsheet writes them: one that
// does not leaves open what a spreadsheet would show, and is an error. A
// row past maxRows is refused as past the limits: a Review sheet holds no
// more. An error of fn stops the read and is returned.
func (w *workbookReader) readRows(sheet workbookSheet, maxRows int, fn func(row int, cells []workbookCell) error) error {
	if err := w.readSharedStrings(); err != nil {
		return err
	}
	r, err := w.part(sheet.part, maxWorkbookPart)
	if err == nil && r == nil {
		err = &reconcile.ParseError{File: w.path, Err: fmt.Errorf("sheet %s: no part %s", sheet.name, reconcile.Quote(sheet.part))}
	}
	if err != nil {
		return err
	}
	defer r.Close()
	d := xml.NewDecoder(r)
	var (
		cells []workbookCell
		depth int  // of the element being read
		data  int  // depth of <sheetData> while it is read, else 0
		seen  bool // the sheet's one <sheetData> was read
		row   int  // the row being read, or the last one
		col   int  // the column of its last cell, blank or not
		inRow bool
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return w.malformed("sheet "+sheet.name, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case t.Name.Local == "sheetData" && !seen:
				data, seen = depth, true
			case t.Name.Local == "row" && data > 0 && depth == data+1:
				if row, err = w.rowNumber(sheet, t, row, maxRows); err != nil {
					return err
				}
				col, inRow, cells = 0, true, cells[:0]
			case t.Name.Local == "c" && inRow && depth == data+2:
				c, err := w.readCell(d, t, row, col)
				var limit *reconcile.ParseError
				switch {
				case errors.As(err, &limit):
					return err
				case err != nil:
					return w.sheetError(sheet, row, "%v", err)
				}
				depth-- // readCell read its end
				if col = c.col; c.typ != cellBlank {
					cells = append(cells, c)
				}
			}
		case xml.EndElement:
			if t.Name.Local == "row" && inRow && depth == data+1 {
				inRow = false
				if err := fn(row, cells); err != nil {
					return err
				}
			}
			if depth == data {
				data = 0
			}
			depth--
		}
	}
}

// rowNumber is the number of the row start begins, after row prev: its r
// attribute, which must be past prev, else the next one; a row past
// maxRows is refused as past the limits.
func (w *workbookReader) rowNumber(sheet workbookSheet, start xml.StartElement, prev, maxRows int) (int, error) {
	n := prev + 1
	if v, ok := attr(start, "r"); ok {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			return 0, w.sheetError(sheet, prev, "row number %s", reconcile.Quote(v))
		}
		if n <= prev {
			return 0, w.sheetError(sheet, prev, "row %d after row %d: rows out of order", n, prev)
		}
	}
	if n > maxRows {
		return 0, w.tooLarge("sheet %s has a row %d; a Review sheet has at most %d rows", sheet.name, n, maxRows)
	}
	return n, nil
}

// sheetError is a mistake in sheet at row.
func (w *workbookReader) sheetError(sheet workbookSheet, row int, format string, args ...any) error {
	return &reconcile.ParseError{File: w.path, Line: row, Err: fmt.Errorf("sheet %s: %s", sheet.name, fmt.Sprintf(format, args...))}
}

// readCell reads the cell start begins, in row after column prev.
func (w *workbookReader) readCell(d *xml.Decoder, start xml.StartElement, row, prev int) (workbookCell, error) {
	x, err := readCellXML(d)
	if err != nil {
		return workbookCell{}, err
	}
	c := workbookCell{col: prev + 1}
	if ref, ok := attr(start, "r"); ok {
		col, r, err := excelize.CellNameToCoordinates(ref)
		if err != nil || r != row {
			return c, fmt.Errorf("cell %s in row %d", reconcile.Quote(ref), row)
		}
		c.col = col
	}
	if c.col <= prev || c.col > excelize.MaxColumns {
		return c, fmt.Errorf("cell of column %d after column %d: cells out of order", c.col, prev)
	}
	t, _ := attr(start, "t")
	if x.v != nil {
		c.value = *x.v
	}
	switch {
	case x.formula:
		c.typ = cellFormula
	case t == "str" && x.v != nil: // a formula's text result, or plain text as some tools write it
		c.typ = cellText
	case t == "inlineStr":
		if x.is != nil {
			c.typ, c.value = cellText, *x.is
		}
	case x.v == nil:
		c.typ = cellBlank
	case t == "s":
		i, err := strconv.Atoi(strings.TrimSpace(c.value))
		s, ok := w.sst.at(i)
		if err != nil || !ok {
			return c, fmt.Errorf("cell of column %d: no shared string %s", c.col, reconcile.Quote(c.value))
		}
		c.typ, c.value = cellText, s
	case t == "" || t == "n":
		c.typ = cellNumber
	case t == "b":
		c.typ = cellBool
	case t == "e":
		c.typ = cellError
	case t == "d":
		c.typ = cellDate
	default:
		c.typ = cellUnknown
	}
	return c, nil
}

// cellXML is what a cell's element holds.
type cellXML struct {
	formula bool    // an <f>
	v       *string // its <v>: a value, a formula's result, a shared string's index
	is      *string // the text of its inline string (<is>)
}

// readCellXML reads the rest of a <c> element just begun.
func readCellXML(d *xml.Decoder) (cellXML, error) {
	var x cellXML
	for {
		tok, err := d.Token()
		if err != nil {
			return x, err
		}
		switch t := tok.(type) {
		case xml.EndElement: // the cell's: what is in it is read whole
			return x, nil
		case xml.StartElement:
			switch t.Name.Local {
			case "f":
				x.formula, err = true, d.Skip()
			case "v":
				x.v = new(string)
				err = d.DecodeElement(x.v, &t)
			case "is":
				var s string
				s, err = richText(d)
				x.is = &s
			default:
				err = d.Skip()
			}
			if err != nil {
				return x, err
			}
		}
	}
}

// attr is the value of the attribute of e with the local name name.
func attr(e xml.StartElement, name string) (string, bool) {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}
